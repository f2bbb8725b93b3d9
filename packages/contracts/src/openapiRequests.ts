import type { JsonObject } from './schemaFiles.ts';

/**
 * What the gateway refuses beyond the schemas of schemas/http, said in the OpenAPI document's own
 * copies of them (its components), so a client generated from the document does not send it. The
 * files themselves stay as they are: the gateway validates with them and states these rules in its
 * own words (D11's statuses and messages), and the command schemas that share their definitions
 * are read by every replay of the log (D26), which a narrowing must never reach.
 */

/** Strings without U+0000 (the body check of edge/body.ts: PostgreSQL text cannot hold it). */
export const NUL_FREE = '^[^\\u0000]*$';
/** The same, and not only white space: a blank value is a missing one (`\S` in schemas/http). */
export const NUL_FREE_NOT_BLANK = '^[^\\u0000]*[^\\s\\u0000][^\\u0000]*$';
/**
 * A date-time as both readers take it: RFC 3339 with seconds (the schemas' `format: date-time`)
 * and as parseInstant reads it (packages/domain instant.ts: at most 9 fraction digits, an offset
 * with minutes, no leap second, `T` or one space between date and time).
 */
export const DATE_TIME = '^\\d{4}-\\d{2}-\\d{2}[Tt ]\\d{2}:\\d{2}:[0-5]\\d(\\.\\d{1,9})?([Zz]|[+-]\\d{2}:?\\d{2})$';

const NUL_NOTE =
  'Every string of the body is valid Unicode without U+0000 (a `\\u0000` escape, or an unpaired surrogate, is 400 `invalid JSON body`), and every number is taken exactly as written: one that JSON parsing would round (past 15 significant digits, or out of range) is refused as its item, row or line (docs/api.md "Value ranges").';
const LOCATION_XOR = 'Exactly one of `location_id` and `location` (D11: both is 422 `invalid_payload`, neither 400).';
const LINE_LOCATION_XOR = 'Exactly one of `location_id` and `location` (D17; else 422 `invalid_payload`).';
const AS_OF =
  'From 2000-01-01T00:00:00Z, and at most 5 minutes ahead of the gateway clock (D15b): else 422 `invalid_payload`. Default: the time the gateway received the request.';
const QTY = ['on_hand', 'available', 'allocated', 'reserved', 'incoming'] as const;

const isString = (s: JsonObject): boolean => s['type'] === 'string' || (Array.isArray(s['type']) && s['type'].includes('string'));

/** The pattern of a string schema once it also refuses NUL; a pattern this does not know is an error to look at. */
function nulFreePattern(s: JsonObject): string | null {
  if (s['format'] === 'date-time') return DATE_TIME;
  // A uuid, a date or a listed value cannot hold NUL.
  if (s['format'] !== undefined || s['enum'] !== undefined || s['const'] !== undefined) return null;
  const pattern = s['pattern'];
  if (pattern === undefined || pattern === NUL_FREE) return NUL_FREE;
  if (pattern === '\\S' || pattern === NUL_FREE_NOT_BLANK) return NUL_FREE_NOT_BLANK;
  throw new Error(`openapiRequests.ts: say how pattern ${JSON.stringify(pattern)} refuses NUL`);
}

/** Every string schema under `schema` refuses NUL (and a date-time takes parseInstant's form). */
function refuseNul(schema: unknown): void {
  if (Array.isArray(schema)) return schema.forEach(refuseNul);
  if (schema === null || typeof schema !== 'object') return;
  const s = schema as JsonObject;
  if (isString(s)) {
    const pattern = nulFreePattern(s);
    if (pattern !== null) s['pattern'] = pattern;
  }
  for (const [key, value] of Object.entries(s)) if (key !== 'examples' && key !== 'enum' && key !== 'const') refuseNul(value);
}

/** `components[name]` followed by `path` (property names), which must exist: a renamed schema fails here, not silently. */
function at(components: Record<string, JsonObject>, name: string, ...path: string[]): JsonObject {
  let node: unknown = components[name];
  for (const key of path) node = (node as JsonObject | undefined)?.[key];
  if (node === null || typeof node !== 'object')
    throw new Error(`openapiRequests.ts: no ${[name, ...path].join('.')} in the bundled schemas`);
  return node as JsonObject;
}

const oneOfLocation = { oneOf: [{ required: ['location_id'] }, { required: ['location'] }] };
const describe = (s: JsonObject, text: string): void => {
  s['description'] = typeof s['description'] === 'string' ? `${s['description']} ${text}` : text;
};

const fileOf = (schema: JsonObject): string => (typeof schema['$comment'] === 'string' ? schema['$comment'] : '');
const isAnswer = (schema: JsonObject): boolean => fileOf(schema).startsWith('schemas/http/responses.json');

/** Every `$ref` under `value`, rewritten by `to`. */
function eachRef(value: unknown, to: (ref: string) => string): void {
  if (Array.isArray(value)) return value.forEach((v) => eachRef(v, to));
  if (value === null || typeof value !== 'object') return;
  const o = value as JsonObject;
  for (const [k, v] of Object.entries(o))
    if (k === '$ref' && typeof v === 'string') o[k] = to(v);
    else eachRef(v, to);
}

/**
 * A request definition an answer also uses (the location reference of the registry's answer) is
 * narrowed in a copy of its own, `<name>Input`, which the requests then refer to: an answer, and
 * the results of earlier versions that `GET /api/commands/{id}` returns (D6), keep the wide schema.
 */
function splitShared(components: Record<string, JsonObject>, prefix: string): Set<string> {
  const name = (ref: string): string | undefined => (ref.startsWith(prefix) ? ref.slice(prefix.length).split('/')[0] : undefined);
  const answered = new Set<string>();
  const visit = (n: string): void => {
    if (answered.has(n) || !components[n]) return;
    answered.add(n);
    eachRef(components[n], (ref) => {
      const target = name(ref);
      if (target) visit(target);
      return ref;
    });
  };
  for (const [n, schema] of Object.entries(components)) if (isAnswer(schema)) visit(n);
  const shared = [...answered].filter((n) => !isAnswer(components[n]!));
  for (const n of shared) components[`${n}Input`] = structuredClone(components[n]!);
  for (const [n, schema] of Object.entries(components))
    if (!answered.has(n))
      eachRef(schema, (ref) => {
        const target = name(ref);
        return target !== undefined && shared.includes(target) ? `${prefix}${target}Input${ref.slice(prefix.length + target.length)}` : ref;
      });
  return answered;
}

/**
 * Narrows the request schemas among `components` (those bundled from schemas/http, the answers of
 * responses.json aside) to what the gateway accepts. Each rule names where the gateway enforces it.
 */
export function narrowRequestSchemas(components: Record<string, JsonObject>, prefix: string): void {
  const answered = splitShared(components, prefix);
  for (const [name, schema] of Object.entries(components)) {
    const file = fileOf(schema);
    if (file.startsWith('schemas/http/') && !answered.has(name)) refuseNul(schema);
    if (/^schemas\/http\/[^#]+\.request\.json$/.test(file)) describe(schema, NUL_NOTE);
  }

  // routes/inventory.ts locationRefOf (D11).
  for (const name of ['InventorySnapshotRequest', 'InventoryAvailableRequest']) {
    Object.assign(at(components, name), oneOfLocation);
    describe(at(components, name), LOCATION_XOR);
    describe(at(components, name, 'properties', 'inventory_as_of'), AS_OF);
  }
  describe(at(components, 'InventoryLevelsRequest', 'properties', 'inventory_as_of'), AS_OF);

  // routes/inventory.ts normaliseLevelsLine (D17): a line names its location once, sets or adds at
  // least one quantity, and gives each delta under one of its two names.
  const absolute = at(components, 'InventoryLevelsAbsoluteLines', 'properties', 'lines', 'items');
  Object.assign(absolute, oneOfLocation, { anyOf: QTY.map((q) => ({ required: [`${q}_qty`] })) });
  describe(absolute, `${LINE_LOCATION_XOR} At least one quantity.`);
  const delta = at(components, 'InventoryLevelsDeltaLines', 'properties', 'lines', 'items');
  Object.assign(delta, oneOfLocation, {
    anyOf: QTY.flatMap((q) => [{ required: [`${q}_delta`] }, { required: [`${q}_qty_delta`] }]),
    // The names are repeated under `properties` so a linter sees them defined (Redocly looks into `not` alone).
    allOf: QTY.map((q) => ({
      not: { properties: { [`${q}_delta`]: {}, [`${q}_qty_delta`]: {} }, required: [`${q}_delta`, `${q}_qty_delta`] },
    })),
  });
  describe(
    delta,
    `${LINE_LOCATION_XOR} At least one \`<quantity>_delta\`, each under one of its two names (\`available_delta\` or \`available_qty_delta\`, never both).`,
  );

  // routes/products.ts: a blank barcode or product name is the spec's `barcode and product_name required`.
  for (const field of ['barcode', 'product_name']) at(components, 'ProductInput', 'properties', field)['pattern'] = NUL_FREE_NOT_BLANK;

  // packages/domain validateRow (D20): what a row's fields take; the amounts' identities and the
  // times' business range (docs/api.md "Value ranges") are row errors the document states in words.
  Object.assign(at(components, 'OrderLineRow', 'properties', 'currency'), { minLength: 1, maxLength: 1000 });
  at(components, 'OrderLineRow', 'properties', 'line_instance_no')['maximum'] = 2147483647;
  for (const field of ['ordered_at', 'refunded_at'])
    describe(
      at(components, 'OrderLineRow', 'properties', field),
      'From 2000-01-01T00:00:00Z to before 2100-01-01T00:00:00Z (else the row is rejected, `invalid_value`).',
    );

  // routes/admin.ts: the daily copy's date (D16).
  describe(
    at(components, 'DailySnapshotRequest', 'properties', 'snapshot_date'),
    'From 2000-01-01 to the current business date (BUSINESS_TIMEZONE): else 422 `invalid_payload`. Default: the business day that ended last.',
  );
}
