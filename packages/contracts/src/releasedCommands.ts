import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import { canonicalJson } from './compat/canonicalJson.ts';
import type { FileLock } from './frozenFiles.ts';
import type { CommandEnvelope } from './types.ts';
import { SCHEMA_ID_BASE, type JsonObject } from './schemaFiles.ts';
import { SCHEMAS_DIR, type SchemaName } from './validation.ts';

// The released command schemas (docs/replay.md#command-versions): each version of the command schemas
// the gateway ever wrote, kept for ever in schemas/commands/v<N>/, since every replay reads the
// commands of that version with them (D26). Today's schemas/commands/*.json are the current version.

/** The payload schema of each kind, a file of schemas/commands/ (and of each version's folder). */
export const COMMAND_PAYLOAD_FILES = {
  'products.upsert': 'products-upsert.json',
  'locations.register': 'locations-register.json',
  'channels.register': 'channels-register.json',
  'inventory.snapshot': 'inventory-snapshot.json',
  'inventory.available': 'inventory-available.json',
  'inventory.levels': 'inventory-levels.json',
  'inventory.daily_snapshot': 'daily-snapshot.json',
  'order_lines.upsert': 'order-lines-upsert.json',
} as const satisfies Record<CommandEnvelope['kind'], string>;

export const ENVELOPE_FILE = 'envelope.json' as const;

/** The sha256 of every released file: a released version never changes. */
export function releasedCommandsLock(schemasDir: string = SCHEMAS_DIR): FileLock {
  return { dir: join(schemasDir, 'commands'), lock: 'released.sha256', covers: (p) => /^v\d+\//.test(p) };
}

/** A released command schema's name in the SchemaRegistry: `commands/v1/envelope.json`. */
export function releasedSchemaName(version: number, file: string): SchemaName {
  return `commands/v${version}/${file}` as SchemaName;
}

/** The schema files of a released version, by file name. */
export function releasedCommandFiles(version: number, schemasDir: string = SCHEMAS_DIR): string[] {
  return readdirSync(join(schemasDir, 'commands', `v${version}`))
    .filter((f) => f.endsWith('.json'))
    .sort();
}

const readJson = (path: string): JsonObject => JSON.parse(readFileSync(path, 'utf8')) as JsonObject;

/**
 * A file of schemas/commands/ as it is released as `version`: its `$id` under `v<version>/`, and
 * self-contained, since a released version must not move when what it refers to does (the command
 * schemas share definitions with the HTTP requests, `../http/product.json`): every file it refers to,
 * directly or not, is copied under its `$defs` (`http.product.json`) and the `$ref`s point there.
 */
export function releasedForm(file: string, version: number, schemasDir: string = SCHEMAS_DIR): JsonObject {
  const rootPath = `commands/${file}`;
  const defs: Record<string, JsonObject> = {};
  const keyOf = (path: string) => path.replace(/\//g, '.');

  const include = (path: string): void => {
    if (keyOf(path) in defs) return;
    defs[keyOf(path)] = {}; // taken, for a cycle of references
    const { $id: _id, $schema: _s, ...schema } = readJson(join(schemasDir, path));
    defs[keyOf(path)] = rewrite(schema, path) as JsonObject;
  };
  const refTo = (ref: string, from: string): string => {
    const [path = '', fragment = ''] = ref.split('#');
    const target = path ? posix.join(posix.dirname(from), path) : from;
    if (target === rootPath) return `#${fragment}`;
    include(target);
    return `#/$defs/${keyOf(target)}${fragment}`;
  };
  const rewrite = (node: unknown, from: string): unknown => {
    if (Array.isArray(node)) return node.map((n) => rewrite(n, from));
    if (node === null || typeof node !== 'object') return node;
    const out: JsonObject = {};
    for (const [k, v] of Object.entries(node)) out[k] = k === '$ref' && typeof v === 'string' ? refTo(v, from) : rewrite(v, from);
    return out;
  };

  const { $id: _id, ...root } = rewrite(readJson(join(schemasDir, rootPath)), rootPath) as JsonObject;
  const own = (root['$defs'] as JsonObject | undefined) ?? {};
  const $defs = Object.fromEntries(Object.entries({ ...own, ...defs }).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return { $id: `${SCHEMA_ID_BASE}${releasedSchemaName(version, file)}`, ...root, ...(Object.keys($defs).length ? { $defs } : {}) };
}

/** A released schema file's text: two-space JSON, as committed. */
export const releasedText = (schema: JsonObject): string => `${JSON.stringify(schema, null, 2)}\n`;

// Keywords that describe rather than constrain: a change to them is no change of shape.
const ANNOTATIONS = new Set(['title', 'description', '$comment', 'examples']);
// Keywords whose value is a map of names to schemas, or data, rather than a schema.
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);
const DATA = new Set(['enum', 'const', 'default', 'required']);

/** A schema without its annotations: what it accepts, to compare today's schemas with a released version. */
export function shapeOf(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(shapeOf);
  if (schema === null || typeof schema !== 'object') return schema;
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(schema)) {
    if (ANNOTATIONS.has(k)) continue;
    if (DATA.has(k)) out[k] = v;
    else if (SCHEMA_MAPS.has(k) && v && typeof v === 'object')
      out[k] = Object.fromEntries(Object.entries(v as JsonObject).map(([name, s]) => [name, shapeOf(s)]));
    else out[k] = shapeOf(v);
  }
  return out;
}

/**
 * The files of today's schemas/commands/ whose shape differs from their release as `version`, or that
 * it lacks (and the released files today's no longer has): empty when the gateway writes exactly
 * what `v<version>/` reads.
 */
export function changedSinceRelease(version: number, schemasDir: string = SCHEMAS_DIR): string[] {
  const today = readdirSync(join(schemasDir, 'commands')).filter((f) => f.endsWith('.json'));
  const released = existsSync(join(schemasDir, 'commands', `v${version}`)) ? releasedCommandFiles(version, schemasDir) : [];
  const out: string[] = [];
  for (const file of today.sort()) {
    if (!released.includes(file)) out.push(`${file}: not in v${version}/`);
    else {
      const { $id: _a, ...now } = releasedForm(file, version, schemasDir);
      const { $id: _b, ...then } = readJson(join(schemasDir, 'commands', `v${version}`, file));
      if (canonicalJson(shapeOf(now)) !== canonicalJson(shapeOf(then))) out.push(`${file}: differs from v${version}/${file}`);
    }
  }
  for (const file of released) if (!today.includes(file)) out.push(`v${version}/${file}: no longer in schemas/commands/`);
  return out;
}
