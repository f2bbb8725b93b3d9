import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

export const SCHEMAS_DIR = fileURLToPath(new URL('../../../schemas', import.meta.url));

/**
 * The folders of schemas/ that hold the schemas, in name order; `schemas/published/` holds the
 * documents built from them as served (docs/api.md#changing-a-published-contract), never read here.
 */
export const SCHEMA_GROUPS = ['commands', 'events', 'http'] as const;

/** A schema file under schemas/, e.g. `http/product.json`. */
export type SchemaName = `${(typeof SCHEMA_GROUPS)[number]}/${string}.json`;

export interface ValidationFailure {
  /** Human message in the spec's style: `shop required`, `lines[12].on_hand_qty must be integer`. */
  message: string;
  /** Path of the first bad value, e.g. `lines[12].on_hand_qty` (empty for the root). */
  path: string;
  /** ajv's keyword, except `required` (also for an empty string) and `unknown_field` (D27). */
  keyword: string;
}

export type Validator<T> = (value: unknown) => { ok: true; value: T } | { ok: false; failure: ValidationFailure };

/**
 * Every schema under schemas/ compiled once, at start-up (STYLE.md): strict mode, all errors.
 *
 * Unknown properties depend on who wrote the value:
 * - `http/*` (a client's request) refuses them (D27): a field the schema does not define is an
 *   `unknown_field` failure, never silently dropped (a dropped `avaliable_qty` typo would be a write
 *   that does nothing).
 * - `commands/*` and `events/*` (written by our own code, kept in the log for ever) are read
 *   tolerantly: extra properties are stripped. A command accepted with 200/202 must decode in every
 *   later projector and every replay (D13, D26), even if the code that wrote it carried a field
 *   the current schema no longer knows; the gateway's D27 check already ran when it was accepted.
 */
export class SchemaRegistry {
  private readonly refusing: Ajv;
  private readonly tolerant: Ajv;
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(schemasDir: string = SCHEMAS_DIR) {
    this.refusing = createAjv(false);
    this.tolerant = createAjv(true);
    for (const folder of schemaFolders(schemasDir)) {
      for (const file of readdirSync(join(schemasDir, folder)).filter((f) => f.endsWith('.json'))) {
        const schema = JSON.parse(readFileSync(join(schemasDir, folder, file), 'utf8')) as object;
        this.refusing.addSchema(schema);
        this.tolerant.addSchema(structuredClone(schema));
      }
    }
  }

  validator<T>(name: SchemaName): Validator<T> {
    let fn = this.compiled.get(name);
    if (!fn) {
      const id = `https://schemas.ingest.local/${name}`;
      fn = (name.startsWith('http/') ? this.refusing : this.tolerant).getSchema(id);
      if (!fn) throw new Error(`unknown schema ${name}`);
      // Stryker disable next-line CallExpression: a cache only; ajv's getSchema returns the same compiled function again
      this.compiled.set(name, fn);
    }
    const validate = fn;
    const fieldOrder = Object.keys((validate.schema as { properties?: object }).properties ?? {});
    return (value) => {
      if (validate(value)) return { ok: true, value: value as T };
      return { ok: false, failure: describeFirstError(validate.errors ?? [], fieldOrder) };
    };
  }
}

/** The released versions of the command schemas (the `v<N>` folders of schemas/commands), in order. */
export function releasedCommandVersions(schemasDir: string = SCHEMAS_DIR): number[] {
  const dir = join(schemasDir, 'commands');
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory() && /^v[1-9]\d*$/.test(e.name))
    .map((e) => Number(e.name.slice(1)))
    .sort((a, b) => a - b);
}

/**
 * The folders of schemas/ that the registry compiles: the three groups, and each released version of
 * the command schemas (`commands/v1`, docs/replay.md#command-versions), which old commands are read with.
 */
function schemaFolders(schemasDir: string): string[] {
  const groups = SCHEMA_GROUPS.filter((g) => existsSync(join(schemasDir, g)));
  return [...groups, ...releasedCommandVersions(schemasDir).map((v) => `commands/v${v}`)];
}

function createAjv(stripUnknown: boolean): Ajv {
  const ajv = new Ajv({ strict: true, allErrors: true, removeAdditional: stripUnknown, useDefaults: false });
  addFormats(ajv);
  // ajv-formats' uuid also accepts `urn:uuid:...`, which a PostgreSQL uuid column refuses.
  ajv.addFormat('uuid', /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i);
  return ajv;
}

/** Turns ajv's first error into the spec's message style (D11). */
export function describeFirstError(errors: ErrorObject[], fieldOrder: string[] = []): ValidationFailure {
  const err = pickError(errors, fieldOrder);
  if (!err) return { message: 'invalid payload', path: '', keyword: 'unknown' };
  const base = pointerToPath(err.instancePath);
  const at = (child: string): string => (base ? `${base}.${child}` : child);
  const params = err.params as Record<string, unknown>;
  switch (err.keyword) {
    case 'required': {
      const path = at(String(params['missingProperty']));
      return { message: `${path} required`, path, keyword: 'required' };
    }
    case 'additionalProperties': {
      // D27: named by its full path (`lines[3].avaliable_qty is not allowed`), keyword = D27's code.
      const path = at(String(params['additionalProperty']));
      return { message: `${path} is not allowed`, path, keyword: 'unknown_field' };
    }
    case 'type': {
      const types = String(params['type']).split(',').join(' or ');
      return { message: `${base || 'body'} must be ${types}`, path: base, keyword: 'type' };
    }
    case 'minLength':
      if (params['limit'] === 1) return { message: `${base} required`, path: base, keyword: 'required' };
      return { message: `${base} must be at least ${String(params['limit'])} characters`, path: base, keyword: err.keyword };
    case 'maxLength':
      return { message: `${base} must be at most ${String(params['limit'])} characters`, path: base, keyword: err.keyword };
    case 'maxItems':
      return { message: `${base} exceeds the limit of ${String(params['limit'])} items`, path: base, keyword: err.keyword };
    case 'minItems':
      return { message: `${base} must have at least ${String(params['limit'])} item(s)`, path: base, keyword: err.keyword };
    case 'enum':
      return {
        message: `${base} must be one of ${(params['allowedValues'] as unknown[]).join(', ')}`,
        path: base,
        keyword: err.keyword,
      };
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return { message: `${base} must be ${String(params['comparison'])} ${String(params['limit'])}`, path: base, keyword: err.keyword };
    case 'pattern':
      // `\S`: a value of only blanks counts as missing.
      if (params['pattern'] === '\\S') return { message: `${base} required`, path: base, keyword: 'required' };
      return { message: `${base} has an invalid format`, path: base, keyword: err.keyword };
    case 'format':
      return { message: `${base} must be a valid ${String(params['format'])}`, path: base, keyword: err.keyword };
    default:
      return { message: `${base || 'body'} ${err.message ?? 'is invalid'}`, path: base, keyword: err.keyword };
  }
}

// Report the first top-level field in schema order (`shop` before `lines`), then the shallowest
// problem, then the earliest array index (`lines[3]` before `lines[12]`).
function pickError(errors: ErrorObject[], fieldOrder: string[]): ErrorObject | undefined {
  const useful = errors.filter((e) => e.keyword !== 'oneOf' && e.keyword !== 'anyOf' && e.keyword !== 'if');
  const list = useful.length ? useful : errors;
  const rank = (e: ErrorObject): number => {
    const top = e.instancePath.split('/')[1] ?? String((e.params as { missingProperty?: string }).missingProperty ?? '');
    const i = fieldOrder.indexOf(top);
    return i < 0 ? fieldOrder.length : i;
  };
  // An unknown property is ranked where it sits (`/lines/3/x`), like a bad value of a known one.
  const at = (e: ErrorObject): string =>
    e.keyword === 'additionalProperties'
      ? `${e.instancePath}/${String((e.params as { additionalProperty?: string }).additionalProperty)}`
      : e.instancePath;
  const depth = (e: ErrorObject): number => at(e).split('/').length;
  return [...list].sort((a, b) => rank(a) - rank(b) || depth(a) - depth(b) || compareIndexPaths(at(a), at(b)))[0];
}

function compareIndexPaths(a: string, b: string): number {
  const pa = a.split('/');
  const pb = b.split('/');
  // Stryker disable next-line MethodExpression: pickError compares paths of equal depth only, whose min and max lengths are one
  for (let i = 0; i < Math.min(pa.length, pb.length); i++) {
    // Stryker disable next-line StringLiteral: i is within both paths, so the fallback is never used
    const x = pa[i] ?? '';
    // Stryker disable next-line StringLiteral: as above
    const y = pb[i] ?? '';
    if (x === y) continue;
    const nx = Number(x);
    const ny = Number(y);
    // Stryker disable next-line LogicalOperator: with one side not a number, nx - ny is NaN, which Array.prototype.sort takes as 0, like the `return 0` below
    if (Number.isInteger(nx) && Number.isInteger(ny)) return nx - ny;
    return 0;
  }
  return 0;
}

/** `/lines/12/on_hand_qty` -> `lines[12].on_hand_qty`. */
export function pointerToPath(pointer: string): string {
  let out = '';
  // Stryker disable next-line MethodExpression: a JSON pointer is '' or starts with '/': the first segment is always '' and adds nothing
  for (const raw of pointer.split('/').slice(1)) {
    const seg = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (/^\d+$/.test(seg)) out += `[${seg}]`;
    else out += out ? `.${seg}` : seg;
  }
  return out;
}
