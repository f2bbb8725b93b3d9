import type { JsonObject } from '../schemaFiles.ts';

/**
 * The published contracts by the path the gateway serves them at, without its leading slash:
 * `openapi.json`, `asyncapi.json`, `schemas/events/stock-level-event.json` (docs/api.md "API contracts").
 */
export type DocSet = ReadonlyMap<string, JsonObject>;

/**
 * Who reads a value, which decides what breaks them (docs/api.md#changing-a-published-contract):
 * - `request`: a client writes it, the gateway reads it; a value it accepted must stay accepted, and an
 *   unknown field is refused (D27), so a removed field is refused too.
 * - `response`: the gateway writes it, a client reads it.
 * - `event`: the projector writes it, consumers read it, and it stays on its topic: a consumer that
 *   validates by `ce_dataschema` (D18) checks old events against the schema served today.
 * - `command`: the gateway writes it, the projector reads it, and the log keeps it for ever: every
 *   replay (D26) decodes the old ones against today's schema.
 */
export type Role = 'request' | 'response' | 'event' | 'command';

export const RULES = {
  'field-removed': 'a field (property or response header) was removed or renamed',
  'type-narrowed': 'a type was narrowed: a type left a union, a value list, condition or branch was added or a branch removed',
  'enum-value-removed': 'a value of an enum (or a const) is no longer accepted',
  'bound-tightened': 'a bound was tightened: maxLength, maximum, maxItems lowered or added, minLength, minimum, minItems raised or added',
  'format-added': 'a format or pattern was added or changed',
  'required-added': 'a field, parameter or body became required',
  'operation-removed': 'a path or a method was removed',
  'status-removed': 'a documented status was removed',
  'media-type-removed': 'a media type of a body was removed',
  'credential-removed': 'a credential an operation accepted is no longer accepted',
  'topic-removed': 'a topic was removed',
  'topic-renamed': "a topic's name changed",
  'message-removed': 'a message was removed from a topic',
  'key-changed': "a message's Kafka key changed",
  'schema-removed': 'a served JSON Schema was removed',
} as const;

export type RuleId = keyof typeof RULES;

export interface Finding {
  rule: RuleId;
  role: Role;
  /** What changed, in a few words: "field `barcode` removed". */
  what: string;
  /** Where: a schemas/ file and pointer, or a place in a document. */
  where: string;
  /** What reaches it: operations (`POST /api/x`), topics (`topic inventory.stock-zero.v1`), served files. */
  via: string[];
  /** For a removal, what was removed as a changelog names it: `POST /api/x`, a topic, a message, a schemas/ file. */
  subject?: string;
}

/** A finding before it knows what reaches it: the walkers add `via`. */
export type Change = Omit<Finding, 'via'>;
