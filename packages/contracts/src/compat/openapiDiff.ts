import type { JsonObject } from '../schemaFiles.ts';
import { sameJson } from './canonicalJson.ts';
import { child, deref, isObject, labelOf, rootOf, type At } from './refs.ts';
import { compareSchemas } from './schemaDiff.ts';
import type { Change, DocSet, Role } from './types.ts';

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** Reports a change seen through `via` (an operation, a topic, a served file). */
export type Report = (change: Change, via: string) => void;

/**
 * The HTTP API of the last release against today's (docs/api.md#changing-a-published-contract): no
 * path, method, status or media type goes, no parameter or body becomes required, no credential an
 * operation accepted is refused, request bodies and parameters accept what they accepted, and
 * responses keep their fields and headers and narrow nothing.
 */
export function compareOpenApi(old: DocSet, current: DocSet, report: Report, doc = 'openapi.json'): void {
  if (!old.has(doc)) return;
  const o = rootOf(old, doc);
  const n = rootOf(current, doc);
  const newPaths = isObject(child(n, 'paths').value) ? Object.keys(child(n, 'paths').value as JsonObject) : [];
  for (const path of Object.keys((child(o, 'paths').value as JsonObject | undefined) ?? {})) {
    // `/api/commands/{id}` and `/api/commands/{command_id}` are one path to a client.
    const same = newPaths.find((p) => template(p) === template(path));
    for (const method of METHODS) {
      const op = child(o, 'paths', path, method);
      if (!isObject(op.value)) continue;
      const name = `${method.toUpperCase()} ${path}`;
      const after = same === undefined ? undefined : child(n, 'paths', same, method);
      if (!after || !isObject(after.value)) {
        report({ rule: 'operation-removed', role: 'request', what: `${name} removed`, where: labelOf(op), subject: name }, name);
        continue;
      }
      const walk = { old, now: current, report: (c: Change) => report(c, name) };
      compareParameters(
        walk,
        [child(o, 'paths', path, 'parameters'), child(op, 'parameters')],
        [child(n, 'paths', same!, 'parameters'), child(after, 'parameters')],
      );
      compareRequestBody(walk, child(op, 'requestBody'), child(after, 'requestBody'));
      compareResponses(walk, child(op, 'responses'), child(after, 'responses'));
      compareSecurity(walk, o, n, op, after);
    }
  }
}

interface Walk {
  old: DocSet;
  now: DocSet;
  report: (c: Change) => void;
}

const template = (path: string): string => path.replace(/\{[^}]*\}/g, '{}');

function schemaOf(w: Walk, role: Role, o: At, n: At): void {
  compareSchemas({ old: w.old, new: w.now, role, report: w.report }, o, n);
}

function compareParameters(w: Walk, oldLists: At[], newLists: At[]): void {
  const index = (side: DocSet, lists: At[]): Map<string, At> => {
    const out = new Map<string, At>();
    for (const list of lists)
      (Array.isArray(list.value) ? list.value : []).forEach((_, i) => {
        const p = deref(side, child(list, i));
        const v = p.value as JsonObject;
        const name = String(v['name']);
        out.set(`${String(v['in'])} ${v['in'] === 'header' ? name.toLowerCase() : name}`, p);
      });
    return out;
  };
  const [before, after] = [index(w.old, oldLists), index(w.now, newLists)];
  for (const [key, p] of after) {
    const was = before.get(key);
    const required = (at: At | undefined): boolean => at !== undefined && (at.value as JsonObject)['required'] === true;
    if (required(p) && !required(was))
      w.report({ rule: 'required-added', role: 'request', what: `${key} parameter is now required`, where: labelOf(p) });
    if (was) schemaOf(w, 'request', child(was, 'schema'), child(p, 'schema'));
  }
}

function compareRequestBody(w: Walk, oldAt: At, newAt: At): void {
  const o = deref(w.old, oldAt);
  const n = deref(w.now, newAt);
  if (!isObject(n.value)) return;
  const required = (at: At): boolean => isObject(at.value) && at.value['required'] === true;
  if (required(n) && !required(o))
    w.report({ rule: 'required-added', role: 'request', what: 'the request body is now required', where: labelOf(n) });
  if (isObject(o.value)) compareContent(w, 'request', 'request body', o, n);
}

function compareContent(w: Walk, role: Role, what: string, o: At, n: At): void {
  const types = (at: At): string[] => Object.keys((child(at, 'content').value as JsonObject | undefined) ?? {});
  const now = new Set(types(n));
  for (const type of types(o)) {
    const at = child(o, 'content', type);
    if (!now.has(type)) w.report({ rule: 'media-type-removed', role, what: `${what}: ${type} removed`, where: labelOf(at) });
    else schemaOf(w, role, child(at, 'schema'), child(n, 'content', type, 'schema'));
  }
}

function compareResponses(w: Walk, o: At, n: At): void {
  for (const status of Object.keys((o.value as JsonObject | undefined) ?? {})) {
    const before = deref(w.old, child(o, status));
    const after = deref(w.now, child(n, status));
    if (!isObject(after.value)) {
      w.report({ rule: 'status-removed', role: 'response', what: `status ${status} removed`, where: labelOf(child(o, status)) });
      continue;
    }
    const headers = (at: At): Map<string, string> =>
      new Map(Object.keys((child(at, 'headers').value as JsonObject | undefined) ?? {}).map((h) => [h.toLowerCase(), h]));
    const now = headers(after);
    for (const [lower, name] of headers(before)) {
      const was = deref(w.old, child(before, 'headers', name));
      const is = now.get(lower);
      if (is === undefined)
        w.report({
          rule: 'field-removed',
          role: 'response',
          what: `response header \`${name}\` removed (status ${status})`,
          where: labelOf(was),
        });
      else schemaOf(w, 'response', child(was, 'schema'), child(deref(w.now, child(after, 'headers', is)), 'schema'));
    }
    compareContent(w, 'response', `status ${status}`, before, after);
  }
}

/**
 * Each way to authenticate an operation accepted (a security requirement: schemes and scopes) must
 * still be accepted: by a requirement that asks for no more schemes or scopes, whose schemes read the
 * credential where they read it before.
 */
function compareSecurity(w: Walk, oRoot: At, nRoot: At, op: At, now: At): void {
  const alternatives = (root: At, at: At): Array<Record<string, string[]>> => {
    const list = at.value ?? child(root, 'security').value;
    if (!Array.isArray(list)) return [{}];
    return list.length ? (list as Array<Record<string, string[]>>) : [{}];
  };
  const scheme = (root: At, name: string): unknown => {
    const s = child(root, 'components', 'securitySchemes', name).value;
    return isObject(s) ? { type: s['type'], in: s['in'], name: s['name'], scheme: s['scheme'] } : undefined;
  };
  const after = alternatives(nRoot, child(now, 'security'));
  for (const alt of alternatives(oRoot, child(op, 'security'))) {
    const kept = after.some((cand) =>
      Object.entries(cand).every(
        ([name, scopes]) =>
          name in alt && scopes.every((s) => (alt[name] ?? []).includes(s)) && sameJson(scheme(oRoot, name), scheme(nRoot, name)),
      ),
    );
    if (!kept) {
      const shown = Object.keys(alt).length
        ? Object.entries(alt)
            .map(([k, v]) => (v.length ? `${k} [${v.join(', ')}]` : k))
            .join(' + ')
        : 'no credential';
      w.report({
        rule: 'credential-removed',
        role: 'request',
        what: `${shown} is no longer accepted`,
        where: labelOf(child(op, 'security')),
      });
    }
  }
}
