import { posix } from 'node:path';
import type { JsonObject } from '../schemaFiles.ts';
import type { DocSet } from './types.ts';

/** A value inside a published document, and how to name its place to a developer. */
export interface At {
  value: unknown;
  /** The document (a DocSet key) and the JSON pointer of the value in it. */
  doc: string;
  ptr: string;
  /** Where a developer edits it: the schemas/ file a bundled component came from, else the document. */
  file: string;
  filePtr: string;
}

export const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

const escape = (key: string | number): string => String(key).replace(/~/g, '~0').replace(/\//g, '~1');
const unescape = (token: string): string => token.replace(/~1/g, '/').replace(/~0/g, '~');

export const labelOf = (at: At): string => (at.filePtr ? `${at.file}#${at.filePtr}` : at.file);

/** The root of a document. */
export function rootOf(set: DocSet, doc: string): At {
  return withOrigin({ value: set.get(doc), doc, ptr: '', file: doc, filePtr: '' });
}

/** A child of a value; undefined values are allowed (the caller checks). */
export function child(at: At, ...keys: Array<string | number>): At {
  let value = at.value;
  for (const k of keys) value = isObject(value) || Array.isArray(value) ? (value as Record<string, unknown>)[k] : undefined;
  const tail = keys.map((k) => `/${escape(k)}`).join('');
  return { value, doc: at.doc, ptr: at.ptr + tail, file: at.file, filePtr: at.filePtr + tail };
}

/**
 * Follows `$ref`s (in the same document, or relative between served schema files) to the value they
 * name. A `$ref` whose siblings are only annotations is its target; one with other keywords is kept
 * as it is (the schema walker treats it as `allOf` of the target and the rest).
 */
export function deref(set: DocSet, at: At): At {
  let cur = at;
  for (let hops = 0; hops < 32; hops++) {
    const v = cur.value;
    if (!isObject(v) || typeof v['$ref'] !== 'string') return cur;
    if (Object.keys(v).some((k) => k !== '$ref' && !ANNOTATIONS.has(k))) return cur;
    const target = resolve(set, cur.doc, v['$ref']);
    if (!target) return cur;
    cur = target;
  }
  throw new Error(`${labelOf(at)}: $ref chain too long`);
}

/** The value a `$ref` names, or undefined when it leaves the published set. */
export function resolve(set: DocSet, fromDoc: string, ref: string): At | undefined {
  const [path = '', fragment = ''] = ref.split('#');
  if (/^[a-z]+:/i.test(path)) return undefined;
  const doc = path ? posix.normalize(posix.join(posix.dirname(fromDoc), path)) : fromDoc;
  let value: unknown = set.get(doc);
  if (value === undefined) return undefined;
  const tokens = fragment ? fragment.split('/').slice(1).map(unescape) : [];
  for (const t of tokens) value = isObject(value) || Array.isArray(value) ? (value as Record<string, unknown>)[t] : undefined;
  if (value === undefined) return undefined;
  return withOrigin({ value, doc, ptr: fragment, file: doc, filePtr: fragment });
}

/** A component bundled from schemas/ names its file in `$comment` (schemaFiles.ts bundleSchemas). */
function withOrigin(at: At): At {
  const comment = isObject(at.value) ? at.value['$comment'] : undefined;
  if (typeof comment !== 'string' || !comment.startsWith('schemas/')) return at;
  const [file = '', fragment = ''] = comment.split('#');
  return { ...at, file, filePtr: fragment };
}

/** Keywords that describe and never refuse a value. */
export const ANNOTATIONS = new Set([
  'title',
  'description',
  'examples',
  'example',
  'default',
  'deprecated',
  'readOnly',
  'writeOnly',
  '$comment',
  '$id',
  '$schema',
  '$defs',
  'definitions',
  'externalDocs',
  'discriminator',
  'xml',
]);
