import type { JsonObject } from '../schemaFiles.ts';
import { sameJson } from './canonicalJson.ts';
import { child, deref, isObject, labelOf, type At } from './refs.ts';
import type { Change, DocSet, Role } from './types.ts';

/**
 * Compares a schema of the last release with today's for who reads it (types.ts Role): every value
 * the old schema accepted must still be accepted (a client's request, an event on its topic, a command
 * in the log), no field may go (D27 refuses an unknown field in a request; a reader of a response or
 * an event loses it), and a request, event or command may not require a field it did not.
 * Structural, not a proof: a keyword the walker does not understand that appears or changes is
 * reported as a narrowing, so an unknown case fails safe.
 */
export interface SchemaWalk {
  old: DocSet;
  new: DocSet;
  role: Role;
  report(change: Change): void;
  /** Pairs already compared (schemas may refer to themselves). */
  seen?: Set<string>;
}

const UPPER = ['maxLength', 'maximum', 'exclusiveMaximum', 'maxItems', 'maxProperties', 'maxContains'] as const;
const LOWER = ['minLength', 'minimum', 'exclusiveMinimum', 'minItems', 'minProperties', 'minContains'] as const;
/** Assertions compared only for equality: added or changed is reported as a narrowing. */
const OTHER = [
  'not',
  'dependentRequired',
  'dependentSchemas',
  'propertyNames',
  'contains',
  'patternProperties',
  'unevaluatedProperties',
  'unevaluatedItems',
  'uniqueItems',
] as const;

export function compareSchemas(w: SchemaWalk, oldAt: At, newAt: At): void {
  const o = splitRef(deref(w.old, oldAt));
  const n = splitRef(deref(w.new, newAt));
  const seen = (w.seen ??= new Set());
  const key = `${o.doc}#${o.ptr}|${n.doc}#${n.ptr}`;
  if (seen.has(key)) return;
  seen.add(key);
  const say = (rule: Change['rule'], what: string, at: At = o) => w.report({ rule, role: w.role, what, where: labelOf(at) });

  if (o.value === false || o.value === undefined) return; // it accepted nothing: nothing can be lost
  const ov: JsonObject = isObject(o.value) ? o.value : {};
  if (n.value === false) return say('type-narrowed', 'now accepts no value at all');
  if (!isObject(n.value)) return;
  const nv = n.value;

  compareTypes(ov, nv, say);
  compareValues(ov, nv, say);
  compareBounds(ov, nv, say);
  compareObjects(w, o, n, say);
  compareArrays(w, o, n, say);
  compareCombinators(w, o, n, say);
  for (const k of OTHER) {
    if (nv[k] !== undefined && !sameJson(ov[k], nv[k]))
      say('type-narrowed', `\`${k}\` added or changed (it may refuse values it accepted)`, n);
  }
}

type Say = (rule: Change['rule'], what: string, at?: At) => void;

/** A `$ref` beside other assertions is `allOf` of its target and the rest (JSON Schema 2020-12). */
function splitRef(at: At): At {
  const v = at.value;
  if (!isObject(v) || typeof v['$ref'] !== 'string') return at;
  const { $ref, allOf, ...rest } = v;
  const branches: unknown[] = Array.isArray(allOf) ? allOf : [];
  return { ...at, value: { ...rest, allOf: [...branches, { $ref }] } };
}

function jsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

/** The types a schema admits: from `type`, else from its value list; null when it does not say. */
function typesOf(s: JsonObject): Set<string> | null {
  const t = s['type'];
  if (typeof t === 'string') return new Set([t]);
  if (Array.isArray(t)) return new Set(t.map(String));
  const values = valuesOf(s);
  return values ? new Set(values.map(jsonType)) : null;
}

function valuesOf(s: JsonObject): unknown[] | null {
  if ('const' in s) return [s['const']];
  return Array.isArray(s['enum']) ? s['enum'] : null;
}

function compareTypes(o: JsonObject, n: JsonObject, say: Say): void {
  const nt = typesOf(n);
  if (nt === null) return;
  const ot = typesOf(o);
  if (ot === null) return say('type-narrowed', `type restricted to ${[...nt].join(' | ')} (it was not restricted)`);
  const lost = [...ot].filter((t) => !nt.has(t) && !(t === 'integer' && nt.has('number')));
  if (lost.length)
    say('type-narrowed', `type ${lost.join(', ')} no longer accepted (was ${[...ot].join(' | ')}, now ${[...nt].join(' | ')})`);
}

function compareValues(o: JsonObject, n: JsonObject, say: Say): void {
  const nv = valuesOf(n);
  if (!nv) return;
  const ov = valuesOf(o);
  if (!ov) return say('type-narrowed', `a value list was added: only ${JSON.stringify(nv)} accepted`);
  const gone = ov.filter((v) => !nv.some((x) => sameJson(x, v)));
  if (gone.length) say('enum-value-removed', `value ${gone.map((v) => JSON.stringify(v)).join(', ')} no longer accepted`);
}

function compareBounds(o: JsonObject, n: JsonObject, say: Say): void {
  const num = (s: JsonObject, k: string): number | undefined => (typeof s[k] === 'number' ? s[k] : undefined);
  for (const k of UPPER) {
    const [a, b] = [num(o, k), num(n, k)];
    if (b !== undefined && (a === undefined || b < a))
      say('bound-tightened', `${k} ${a === undefined ? 'added' : `lowered from ${a}`}: ${b}`);
  }
  for (const k of LOWER) {
    const [a, b] = [num(o, k), num(n, k)];
    if (b !== undefined && (a === undefined || b > a))
      say('bound-tightened', `${k} ${a === undefined ? 'added' : `raised from ${a}`}: ${b}`);
  }
  const [m, mm] = [num(o, 'multipleOf'), num(n, 'multipleOf')];
  if (mm !== undefined && (m === undefined || (m % mm !== 0 && mm !== m))) say('bound-tightened', `multipleOf ${m ?? 'added'} -> ${mm}`);
  for (const k of ['format', 'pattern'] as const) {
    if (n[k] !== undefined && n[k] !== o[k])
      say('format-added', `${k} ${o[k] === undefined ? 'added' : `changed from ${JSON.stringify(o[k])}`}: ${JSON.stringify(n[k])}`);
  }
}

function compareObjects(w: SchemaWalk, o: At, n: At, say: Say): void {
  const ov = o.value as JsonObject;
  const nv = n.value as JsonObject;
  const op = isObject(ov['properties']) ? ov['properties'] : {};
  const np = isObject(nv['properties']) ? nv['properties'] : {};
  for (const k of Object.keys(op)) {
    if (!(k in np)) {
      const added = Object.keys(np).filter((x) => !(x in op));
      say(
        'field-removed',
        `field \`${k}\` removed${added.length ? ` (added: ${added.map((x) => `\`${x}\``).join(', ')}: a rename?)` : ''}`,
        child(o, 'properties', k),
      );
    } else compareSchemas(w, child(o, 'properties', k), child(n, 'properties', k));
  }
  if (w.role !== 'response') {
    const was = new Set(Array.isArray(ov['required']) ? ov['required'].map(String) : []);
    for (const k of Array.isArray(nv['required']) ? nv['required'].map(String) : []) {
      if (!was.has(k)) say('required-added', `field \`${k}\` is now required`, k in np ? child(n, 'properties', k) : n);
    }
  }
  const [oa, na] = [ov['additionalProperties'], nv['additionalProperties']];
  if (na === false && oa !== false) say('type-narrowed', 'additionalProperties became false: fields it does not list are refused', n);
  else if (isObject(na) && isObject(oa)) compareSchemas(w, child(o, 'additionalProperties'), child(n, 'additionalProperties'));
  else if (isObject(na) && oa !== false) say('type-narrowed', 'additionalProperties now restricted by a schema', n);
}

function compareArrays(w: SchemaWalk, o: At, n: At, say: Say): void {
  const ov = o.value as JsonObject;
  const nv = n.value as JsonObject;
  if (nv['items'] !== undefined) {
    if (ov['items'] === undefined) say('type-narrowed', 'items now restricted by a schema', n);
    else compareSchemas(w, child(o, 'items'), child(n, 'items'));
  }
  const [opi, npi] = [ov['prefixItems'], nv['prefixItems']];
  if (Array.isArray(npi)) {
    const old = Array.isArray(opi) ? opi : [];
    npi.forEach((_, i) => {
      if (i < old.length) compareSchemas(w, child(o, 'prefixItems', i), child(n, 'prefixItems', i));
      else say('type-narrowed', `prefixItems[${i}] added`, n);
    });
  }
}

function compareCombinators(w: SchemaWalk, o: At, n: At, say: Say): void {
  const ov = o.value as JsonObject;
  const nv = n.value as JsonObject;
  const list = (s: JsonObject, k: string): unknown[] => (Array.isArray(s[k]) ? s[k] : []);

  // allOf: every branch must hold, so a new branch can only refuse more.
  const [oAll, nAll] = [list(ov, 'allOf'), list(nv, 'allOf')];
  nAll.forEach((_, i) => {
    if (i < oAll.length) compareSchemas(w, child(o, 'allOf', i), child(n, 'allOf', i));
    else say('type-narrowed', `allOf gained a branch (allOf[${i}]: ${Object.keys(isObject(nAll[i]) ? nAll[i] : {}).join(', ')})`, n);
  });

  // anyOf / oneOf: a branch is matched by the schema it names, else by its place.
  for (const k of ['anyOf', 'oneOf'] as const) {
    const [ob, nb] = [list(ov, k), list(nv, k)];
    if (!nb.length) continue;
    if (!ob.length) {
      say('type-narrowed', `${k} added`, n);
      continue;
    }
    const nameOf = (side: DocSet, at: At): string => labelOf(deref(side, at));
    const oldNames = ob.map((_, i) => nameOf(w.old, child(o, k, i)));
    const newNames = nb.map((_, i) => nameOf(w.new, child(n, k, i)));
    const taken = new Set<number>();
    oldNames.forEach((name, i) => {
      let j = newNames.findIndex((x, at) => x === name && !taken.has(at));
      // An inline branch whose place now holds another inline branch: the same branch, edited.
      if (j < 0 && i < nb.length && !taken.has(i) && !oldNames.includes(newNames[i] ?? '')) j = i;
      if (j < 0) return say('type-narrowed', `${k} branch ${name} removed`, child(o, k, i));
      taken.add(j);
      compareSchemas(w, child(o, k, i), child(n, k, j));
    });
  }

  // if/then/else: the same condition compares its branches; a new or changed condition may refuse more.
  if (nv['if'] !== undefined) {
    if (ov['if'] === undefined) say('type-narrowed', 'a condition (if/then/else) was added', n);
    else if (!sameJson(ov['if'], nv['if'])) say('type-narrowed', 'the condition (if) changed', child(n, 'if'));
    else
      for (const k of ['then', 'else'] as const) {
        if (nv[k] === undefined) continue;
        if (ov[k] === undefined) say('type-narrowed', `\`${k}\` added`, n);
        else compareSchemas(w, child(o, k), child(n, k));
      }
  }
}
