import type { JsonObject } from '../schemaFiles.ts';
import { compareAsyncApi } from './asyncapiDiff.ts';
import { parseDeclarations } from './changelog.ts';
import { compareOpenApi } from './openapiDiff.ts';
import { isObject, rootOf } from './refs.ts';
import { compareSchemas } from './schemaDiff.ts';
import type { Change, DocSet, Finding, Role, RuleId } from './types.ts';

export interface Blocked extends Finding {
  /** Why a declaration in docs/changelog.md that names it does not let it through. */
  hint?: string;
}

export interface CheckResult {
  /** Changes that break a reader and that the changelog does not declare: the check fails on them. */
  breaking: Blocked[];
  /** Breaking changes the changelog's Unreleased section declares, with the line that does. */
  declared: Array<{ finding: Finding; line: string }>;
  /** Declarations that matched nothing (a leftover, or a name misspelt). */
  unused: string[];
}

/** What a `Breaking:` declaration can remove: a version is retired, never changed in place. */
const REMOVALS = new Set<RuleId>(['operation-removed', 'topic-removed', 'message-removed', 'schema-removed']);

/** Every change since the last release that breaks a reader, each once, with everything that reaches it. */
export function compareContracts(released: DocSet, current: DocSet): Finding[] {
  const found = new Map<string, Finding>();
  const report = (c: Change, via: string): void => {
    const key = [c.rule, c.role, c.where, c.what].join('\u0000');
    const f = found.get(key);
    if (!f) found.set(key, { ...c, via: [via] });
    else if (!f.via.includes(via)) f.via.push(via);
  };
  compareOpenApi(released, current, report);
  compareAsyncApi(released, current, report);
  for (const name of [...released.keys()].filter((k) => k.startsWith('schemas/')).sort()) {
    const via = `/${name}`;
    const role = roleOfFile(name);
    if (!current.has(name)) {
      report({ rule: 'schema-removed', role, what: `${via} is no longer served`, where: name, subject: name }, via);
      continue;
    }
    // HTTP bodies are compared through the OpenAPI document, which knows who reads each one; commands
    // (only the envelope is in the AsyncAPI document) and events here, as the log and topics keep them.
    if (role === 'command' || role === 'event')
      compareSchemas({ old: released, new: current, role, report: (c) => report(c, via) }, rootOf(released, name), rootOf(current, name));
  }
  return [...found.values()];
}

export function checkContracts(released: DocSet, current: DocSet, changelog: string): CheckResult {
  const declarations = parseDeclarations(changelog);
  const [before, now] = [itemsOf(released), itemsOf(current)];
  const used = new Set<string>();
  const result: CheckResult = { breaking: [], declared: [], unused: [] };
  const stricter = new Set(declarations.stricterRequests.flatMap((d) => d.operations));

  for (const finding of compareContracts(released, current)) {
    let hint: string | undefined;
    if (REMOVALS.has(finding.rule) && finding.subject) {
      const names = [finding.subject, finding.subject.replace(/^[A-Z]+ /, '')];
      const named = declarations.breaking.filter((d) => names.includes(d.removed));
      const ok = named.find((d) => d.successors.some((s) => s !== finding.subject && before.has(s) && now.has(s)));
      if (ok) {
        used.add(ok.line);
        result.declared.push({ finding, line: ok.line });
        continue;
      }
      if (named.length)
        hint = `docs/changelog.md declares its removal, but names no successor that is both in the last release and today (${
          named
            .flatMap((d) => d.successors)
            .map((s) => `\`${s}\``)
            .join(', ') || 'none named'
        }): ship the successor in a release first, then remove the old version`;
    }
    if (finding.role === 'request' && finding.rule !== 'operation-removed' && finding.via.every((v) => stricter.has(v))) {
      const lines = declarations.stricterRequests.filter((d) => d.operations.some((o) => finding.via.includes(o)));
      lines.forEach((d) => used.add(d.line));
      result.declared.push({ finding, line: lines.map((d) => d.line).join(' / ') });
      continue;
    }
    if (finding.role === 'request' && finding.via.some((v) => stricter.has(v)))
      hint = `docs/changelog.md describes a stricter request for some of the operations that reach it; it is also reached by ${finding.via.filter((v) => !stricter.has(v)).join(', ')}`;
    result.breaking.push(hint ? { ...finding, hint } : finding);
  }
  for (const d of [...declarations.breaking, ...declarations.stricterRequests]) if (!used.has(d.line)) result.unused.push(d.line);
  return result;
}

function roleOfFile(name: string): Role {
  if (name.startsWith('schemas/events/')) return 'event';
  if (name.startsWith('schemas/commands/')) return 'command';
  return name === 'schemas/http/responses.json' ? 'response' : 'request';
}

/** The names a changelog can give a contract item: operations, paths, topics, messages, served schemas. */
export function itemsOf(set: DocSet): Set<string> {
  const out = new Set<string>();
  const paths = set.get('openapi.json')?.['paths'];
  for (const [path, item] of Object.entries(isObject(paths) ? paths : {})) {
    out.add(path);
    for (const method of Object.keys(isObject(item) ? item : {})) out.add(`${method.toUpperCase()} ${path}`);
  }
  const asyncapi = set.get('asyncapi.json');
  for (const channel of Object.values((asyncapi?.['channels'] as Record<string, JsonObject> | undefined) ?? {})) {
    if (typeof channel['address'] === 'string') out.add(channel['address']);
    for (const message of Object.keys((channel['messages'] as JsonObject | undefined) ?? {})) out.add(message);
  }
  for (const name of set.keys()) if (name.startsWith('schemas/')) out.add(name);
  return out;
}
