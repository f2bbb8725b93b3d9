import type { Blocked, CheckResult } from './check.ts';
import type { Role, RuleId } from './types.ts';

export const HOW_TO = 'docs/api.md#changing-a-published-contract';

const NEW_API_VERSION = 'or serve the new shape under a new API version path beside this one';
const NEW_EVENT_VERSION =
  'or publish a new event version beside this one (a new schemas/events file, event type and topic, `.v2`), and retire the old one in a later release';
const STRICTER =
  'if the gateway already refused it and only the description catches up, declare it under Unreleased in docs/changelog.md: "- Stricter request description: `METHOD /path`: what, and why it was already refused"';

/** Why a change breaks who reads it, and what to do instead: by rule, then by reader. */
const ADVICE: Record<RuleId, Partial<Record<Role | 'any', string>>> = {
  'field-removed': {
    request: `a client that sends it would be refused with 400 "<field> is not allowed" (D27): keep accepting it (it may be marked deprecated), ${NEW_API_VERSION}`,
    response: `clients read it: keep it (a new name goes beside the old one), ${NEW_API_VERSION}`,
    event: `consumers read it and the events already on the topic carry it: keep it (a new name goes beside the old one), ${NEW_EVENT_VERSION}`,
    command: 'commands already in the log carry it and every replay reads them (D26): keep it',
  },
  'type-narrowed': {},
  'enum-value-removed': {},
  'bound-tightened': {},
  'format-added': {},
  'required-added': {
    request: `a client that does not send it would be refused: keep it optional (the gateway may choose a default, D3), ${NEW_API_VERSION}; ${STRICTER}`,
    event: `the events already on the topic do not carry it: keep it optional, ${NEW_EVENT_VERSION}`,
    command:
      'the commands already in the log do not carry it and a replay reads them (D26): keep it optional, with a default for old commands',
  },
  'operation-removed': {
    any: 'clients call it: keep serving it (mark it `deprecated`) beside its successor, and remove it in a later release, declared in docs/changelog.md as "- Breaking: `METHOD /path` … `successor`"',
  },
  'status-removed': { any: `clients handle it: keep it documented while the gateway can answer it, ${NEW_API_VERSION}` },
  'media-type-removed': {
    request: `clients send it: keep accepting it, ${NEW_API_VERSION}; ${STRICTER}`,
    response: `clients ask for and read it: keep it, ${NEW_API_VERSION}`,
  },
  'credential-removed': {
    any: `clients that authenticate this way would be refused with 401 or 403: keep accepting it, ${NEW_API_VERSION}; ${STRICTER}`,
  },
  'topic-removed': {
    any: 'consumers subscribe to it: keep publishing it beside its successor, and retire it in a later release, declared in docs/changelog.md as "- Breaking: `<topic>` … `<successor topic>`"',
  },
  'topic-renamed': {
    any: 'consumers subscribe by name: keep the topic (the default names are the *_TOPIC settings of packages/runtime/src/config/catalog.ts); a new name is a new topic version published beside it (`.v2`), the old one retired in a later release',
  },
  'message-removed': { any: `consumers of the topic read it: keep publishing it, ${NEW_EVENT_VERSION}` },
  'key-changed': {
    any: "consumers rely on the key for each shop's order (D2, D18): keep it; another key is a new topic version published beside this one",
  },
  'schema-removed': {
    any: 'events name it in `ce_dataschema` (D18) and clients may `$ref` it: keep serving it, or retire it in a later release, declared in docs/changelog.md as "- Breaking: `<file>` … `<successor>`"',
  },
};

/** What a narrowing breaks, by reader (the rules type-narrowed, enum-value-removed, bound-tightened, format-added). */
const NARROWED: Record<Role, string> = {
  request: `a request clients may send today would be refused: keep accepting it, ${NEW_API_VERSION}; ${STRICTER}`,
  response: `a client that validates answers with the published schema would refuse some (GET /api/commands/{id} also answers results stored by earlier versions, D6): keep the schema as wide as it was and say what is sent in its description, ${NEW_API_VERSION}`,
  event: `the events already on the topic would no longer match the schema their \`ce_dataschema\` names (D18): keep it as wide as it was, ${NEW_EVENT_VERSION}`,
  command: 'the commands already in the log would no longer decode in a replay (D26): keep it as wide as it was',
};

export function adviceOf(rule: RuleId, role: Role): string {
  const by = ADVICE[rule];
  return by[role] ?? by.any ?? NARROWED[role];
}

/** The check's outcome for a developer: each breaking change, where it is, what reaches it, what to do. */
export function formatReport(result: CheckResult): string {
  const lines: string[] = [];
  if (result.breaking.length) {
    lines.push(
      `${result.breaking.length} change${result.breaking.length === 1 ? '' : 's'} since the last release (schemas/published/released/) would break ${result.breaking.length === 1 ? 'its' : 'their'} readers:`,
      '',
    );
    result.breaking.forEach((f, i) => lines.push(...entry(f, i + 1), ''));
    lines.push(
      `The rules and how to ship a breaking change (a new version beside the old one): ${HOW_TO}; declarations go under Unreleased in docs/changelog.md.`,
    );
  }
  for (const { finding, line } of result.declared)
    lines.push(`declared in docs/changelog.md (${line}): ${finding.what} at ${finding.where}`);
  for (const line of result.unused)
    lines.push(`note: docs/changelog.md's Unreleased section declares "${line}", which matches no breaking change`);
  return lines.join('\n');
}

function entry(f: Blocked, n: number): string[] {
  return [
    `  ${n}. [${f.rule}] ${f.role}: ${f.what}`,
    `     at   ${f.where}`,
    `     via  ${f.via.join(', ')}`,
    `     do   ${adviceOf(f.rule, f.role)}`,
    ...(f.hint ? [`     note ${f.hint}`] : []),
  ];
}
