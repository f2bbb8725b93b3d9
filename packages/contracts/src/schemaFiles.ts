import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import { SCHEMA_GROUPS, SCHEMAS_DIR, type SchemaName } from './validation.ts';

export type JsonObject = { [key: string]: unknown };

/** The `$id` prefix of every file under schemas/; the registry compiles them under it. */
export const SCHEMA_ID_BASE = 'https://schemas.ingest.local/';

export interface SchemaFile {
  /** `http/product.json` */
  name: SchemaName;
  schema: JsonObject;
}

/** Every JSON Schema under schemas/, read once, in name order. */
export function readSchemaFiles(dir: string = SCHEMAS_DIR): SchemaFile[] {
  const out: SchemaFile[] = [];
  for (const group of SCHEMA_GROUPS.filter((g) => existsSync(join(dir, g)))) {
    for (const file of readdirSync(join(dir, group))
      .filter((f) => f.endsWith('.json'))
      .sort()) {
      out.push({ name: `${group}/${file}` as SchemaName, schema: JSON.parse(readFileSync(join(dir, group, file), 'utf8')) as JsonObject });
    }
  }
  return out;
}

/** Where the gateway serves a schema file: `<public base>/schemas/<name>`. */
export function schemaUrl(publicBaseUrl: string, name: string): string {
  return `${publicBaseUrl}/schemas/${name}`;
}

/**
 * A schema file as the gateway serves it: its `$id` is the URL it is served at, so the
 * relative `$ref`s between files resolve to served URLs too; the rest is the file as it is.
 */
export function publishedSchema(file: SchemaFile, publicBaseUrl: string): JsonObject {
  return { ...structuredClone(file.schema), $id: schemaUrl(publicBaseUrl, file.name) };
}

/**
 * The schema files as one set of named components of an API document (OpenAPI 3.1 or AsyncAPI
 * 3.0), nothing copied by hand: each file is one component named by its `title`, each `$defs`
 * entry its own component (named by its `title`, else `<file title>_<key>`), and every `$ref`
 * between files becomes a reference to the component under `prefix` (`#/components/schemas/`).
 */
export function bundleSchemas(
  files: SchemaFile[],
  prefix: string,
): { components: Record<string, JsonObject>; refOf: (name: string) => string } {
  const fileComponent = new Map<string, string>();
  const defComponent = new Map<string, string>();
  for (const f of files) {
    const title = typeof f.schema['title'] === 'string' ? f.schema['title'] : f.name;
    fileComponent.set(f.name, componentName(title));
    for (const [key, def] of Object.entries((f.schema['$defs'] as Record<string, JsonObject> | undefined) ?? {})) {
      defComponent.set(`${f.name}#${key}`, componentName(typeof def['title'] === 'string' ? def['title'] : `${title}_${key}`));
    }
  }
  const rewrite = (from: string, ref: string): string => {
    const [path = '', fragment = ''] = ref.split('#');
    const target = path ? posix.join(posix.dirname(from), path) : from;
    const base = fileComponent.get(target);
    if (!base) throw new Error(`${from}: $ref ${ref} names no file under schemas/`);
    const def = /^\/\$defs\/([^/]+)(\/.*)?$/.exec(fragment);
    if (def) {
      const name = defComponent.get(`${target}#${def[1]}`);
      if (!name) throw new Error(`${from}: $ref ${ref} names no $defs entry`);
      return `${prefix}${name}${def[2] ?? ''}`;
    }
    return `${prefix}${base}${fragment}`;
  };
  const components: Record<string, JsonObject> = {};
  for (const f of files) {
    const { $id: _id, $defs, ...rest } = structuredClone(f.schema);
    // A file that only holds $defs (inventory-common.json, responses.json) is its $defs.
    if (!$defs || 'type' in rest || 'properties' in rest)
      components[fileComponent.get(f.name) ?? ''] = {
        ...(withRefs(rest, (r) => rewrite(f.name, r)) as JsonObject),
        $comment: `schemas/${f.name}`,
      };
    for (const [key, def] of Object.entries(($defs as Record<string, JsonObject> | undefined) ?? {})) {
      components[defComponent.get(`${f.name}#${key}`) ?? ''] = {
        ...(withRefs(def, (r) => rewrite(f.name, r)) as JsonObject),
        $comment: `schemas/${f.name}#/$defs/${key}`,
      };
    }
  }
  return {
    components,
    refOf: (name) => {
      const [file = '', key] = name.split('#');
      const n = key === undefined ? fileComponent.get(file) : defComponent.get(`${file}#${key}`);
      if (!n) throw new Error(`no schema ${name}`);
      return `${prefix}${n}`;
    },
  };
}

function componentName(title: string): string {
  return title.replace(/[^A-Za-z0-9._-]/g, '_');
}

function withRefs(value: unknown, rewrite: (ref: string) => string): unknown {
  if (Array.isArray(value)) return value.map((v) => withRefs(v, rewrite));
  if (value === null || typeof value !== 'object') return value;
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(value)) out[k] = k === '$ref' && typeof v === 'string' ? rewrite(v) : withRefs(v, rewrite);
  return out;
}
