import fc from 'fast-check';
import { DATE_TIME, NUL_FREE, NUL_FREE_NOT_BLANK } from '@ingest/contracts';

/**
 * Values a JSON Schema allows, as fast-check arbitraries: the subset the OpenAPI document's request
 * schemas use (`$ref`, `allOf`, `oneOf`, `anyOf`, `not`, `if`/`then`/`else`, the type keywords and
 * their bounds, the patterns and formats the document names). Written here rather than taken from a
 * JSON-Schema faker: fast-check then shrinks a failing body to its smallest form and replays it by
 * seed, and a pattern or keyword this does not know fails loudly instead of being skipped. The caller
 * keeps only what its validator accepts (`valid`), so a choice made here too loosely costs a retry,
 * never a wrong verdict.
 */
type Schema = { [key: string]: unknown };

export interface SchemaArbitraryOptions {
  /** The schema a `$ref` of the document points at. */
  resolve: (ref: string) => Schema;
  /** The window dates and date-times are drawn from: the business range the document states in words. */
  times: { from: Date; until: Date };
  /** Items drawn beyond an array's minItems (default 3): enough to see items interact, small enough to stay fast. */
  extraItems?: number;
}

interface Flat {
  parts: Schema[];
  types: string[] | undefined;
  properties: Map<string, Schema[]>;
  required: Set<string>;
  items: Schema[];
  choices: Array<{ kind: 'oneOf' | 'anyOf'; branches: Schema[] }>;
  conditionals: Schema[];
  nots: Schema[];
  num: (key: string, pick: (a: number, b: number) => number) => number | undefined;
  first: (key: string) => unknown;
}

const CHOICE_KEYS = ['oneOf', 'anyOf', 'if', 'then', 'else'];

/** The schemas `parts` (and their `allOf`, `$ref`s followed) as one set of constraints. */
function flatten(parts: Schema[], resolve: SchemaArbitraryOptions['resolve']): Flat {
  const all: Schema[] = [];
  const add = (s: Schema): void => {
    if (typeof s['$ref'] === 'string') return add({ ...resolve(s['$ref']), ...withoutKey(s, '$ref') });
    all.push(s);
    for (const sub of (s['allOf'] as Schema[] | undefined) ?? []) add(sub);
  };
  parts.forEach(add);
  const f: Flat = {
    parts: all.map((s) => Object.fromEntries(Object.entries(s).filter(([k]) => !CHOICE_KEYS.includes(k) && k !== 'allOf'))),
    types: undefined,
    properties: new Map(),
    required: new Set(),
    items: [],
    choices: [],
    conditionals: [],
    nots: [],
    num: (key, pick) =>
      all
        .map((s) => s[key])
        .reduce<number | undefined>((a, v) => (typeof v !== 'number' ? a : a === undefined ? v : pick(a, v)), undefined),
    first: (key) => all.find((s) => s[key] !== undefined)?.[key],
  };
  for (const s of all) {
    const t = s['type'];
    if (t !== undefined) {
      const ts = Array.isArray(t) ? (t as string[]) : [t as string];
      // An integer is a number: the two meet in integer.
      const meet = (x: string): string[] =>
        ts.includes(x) ? [x] : (x === 'integer' && ts.includes('number')) || (x === 'number' && ts.includes('integer')) ? ['integer'] : [];
      f.types = f.types ? f.types.flatMap(meet) : ts;
    }
    for (const [name, p] of Object.entries((s['properties'] as Record<string, Schema> | undefined) ?? {}))
      f.properties.set(name, [...(f.properties.get(name) ?? []), p]);
    for (const r of (s['required'] as string[] | undefined) ?? []) f.required.add(r);
    if (s['items'] !== undefined) f.items.push(s['items'] as Schema);
    for (const kind of ['oneOf', 'anyOf'] as const) if (Array.isArray(s[kind])) f.choices.push({ kind, branches: s[kind] as Schema[] });
    if (s['if'] !== undefined) f.conditionals.push(s);
    if (s['not'] !== undefined) f.nots.push(s['not'] as Schema);
  }
  return f;
}

/** The names of a `not` that only asks for properties to be present (`{required}`, with `properties` of `{}`), else null. */
function namesOnly(n: Schema): string[] | null {
  const props = (n['properties'] as Record<string, Schema> | undefined) ?? {};
  const plain =
    Object.keys(n).every((k) => k === 'required' || k === 'properties') && Object.values(props).every((p) => !Object.keys(p).length);
  return plain && Array.isArray(n['required']) ? (n['required'] as string[]) : null;
}

const withoutKey = (s: Schema, key: string): Schema => Object.fromEntries(Object.entries(s).filter(([k]) => k !== key));

export function schemaArbitrary(schema: Schema, opts: SchemaArbitraryOptions): fc.Arbitrary<unknown> {
  const gen = (parts: Schema[]): fc.Arbitrary<unknown> => {
    const f = flatten(parts, opts.resolve);
    if (f.choices.length || f.conditionals.length) {
      // One branch of each choice, one side of each condition; a oneOf's other branches must then fail.
      const picks = [...f.choices.map((c) => fc.nat(c.branches.length - 1)), ...f.conditionals.map(() => fc.nat(1))];
      return fc.tuple(...picks).chain((chosen) => {
        const extra: Schema[] = [];
        f.choices.forEach((c, i) => {
          extra.push(c.branches[chosen[i]!]!);
          if (c.kind === 'oneOf') c.branches.forEach((b, j) => j !== chosen[i] && extra.push({ not: b }));
        });
        f.conditionals.forEach((c, i) => {
          const yes = chosen[f.choices.length + i] === 0;
          extra.push(yes ? (c['if'] as Schema) : { not: c['if'] }, ((yes ? c['then'] : c['else']) as Schema | undefined) ?? {});
        });
        return gen([...f.parts, ...extra]);
      });
    }
    const constant = f.first('const');
    if (constant !== undefined) return fc.constant(constant);
    const values = f.first('enum') as unknown[] | undefined;
    if (values) return fc.constantFrom(...values);
    const types = f.types ?? (f.properties.size ? ['object'] : f.items.length ? ['array'] : ['null', 'boolean', 'integer', 'string']);
    return fc.oneof(...types.map((t) => ofType(t, f)));
  };

  const ofType = (type: string, f: Flat): fc.Arbitrary<unknown> => {
    switch (type) {
      case 'null':
        return fc.constant(null);
      case 'boolean':
        return fc.boolean();
      case 'integer':
      case 'number':
        return numberOf(type === 'integer', f);
      case 'string':
        return stringOf(f, opts.times);
      case 'array': {
        const min = f.num('minItems', Math.max) ?? 0;
        const max = Math.min(f.num('maxItems', Math.min) ?? Infinity, min + (opts.extraItems ?? 3));
        const item = f.items.length ? gen(f.items) : fc.constant(null);
        return f.first('uniqueItems') === true
          ? fc.uniqueArray(item, { minLength: min, maxLength: max, selector: (v) => JSON.stringify(v) })
          : fc.array(item, { minLength: min, maxLength: max });
      }
      case 'object':
        return objectOf(f);
      default:
        throw new Error(`schemaArbitrary: no values for type ${type}`);
    }
  };

  const objectOf = (f: Flat): fc.Arbitrary<unknown> => {
    // A `not` that only names properties: `{required: [x]}` forbids x, `{required: [x, y]}` never both
    // (one is dropped). Any other `not` is left to the caller's validator.
    const presence = f.nots.map(namesOnly).filter((r): r is string[] => r !== null);
    const forbidden = new Set(presence.filter((r) => r.length === 1).flat());
    const together = presence.filter((r) => r.length > 1);
    const names = [...f.properties.keys()].filter((n) => !forbidden.has(n));
    const model = Object.fromEntries(names.map((n) => [n, gen(f.properties.get(n)!)]));
    return fc.record(model, { requiredKeys: names.filter((n) => f.required.has(n)) }).map((o) => {
      const out = { ...o } as Record<string, unknown>;
      for (const group of together)
        if (group.every((n) => n in out)) {
          const drop = group.find((n) => !f.required.has(n));
          if (drop) delete out[drop];
        }
      return out;
    });
  };

  return gen([schema]);
}

function numberOf(integer: boolean, f: Flat): fc.Arbitrary<number> {
  const lo = f.num('minimum', Math.max) ?? -1e15;
  const hi = f.num('maximum', Math.min) ?? 1e15;
  const small = fc.integer({ min: Math.max(Math.ceil(lo), -1000), max: Math.min(Math.floor(hi), 1000) });
  const wide = fc.bigInt({ min: BigInt(Math.ceil(lo)), max: BigInt(Math.floor(hi)) }).map(Number);
  const edges = fc.constantFrom(Math.ceil(lo), Math.floor(hi));
  if (integer) return fc.oneof(small, wide, edges);
  return fc.oneof(small, edges, fc.double({ min: lo, max: hi, noNaN: true, noDefaultInfinity: true }));
}

/** One code point each: ASCII mostly, some white space, accents, CJK and an astral character; never NUL. */
const CHAR = fc.oneof(
  { weight: 8, arbitrary: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)) },
  { weight: 1, arbitrary: fc.constantFrom('\t', '\n', ' ', '\u00a0') },
  { weight: 2, arbitrary: fc.constantFrom('é', 'ß', '日', '本', '店', '😀', '\u{1F3EC}') },
);
const PRINTABLE = fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c));
const URL_SAFE = fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-');

/** The patterns the document uses, each with the characters that make up a match. */
const PATTERNS: Record<string, { char: fc.Arbitrary<string>; fix?: (s: string) => string }> = {
  [NUL_FREE]: { char: CHAR },
  [NUL_FREE_NOT_BLANK]: { char: CHAR, fix: (s) => (/\S/.test(s) ? s : `x${[...s].slice(1).join('')}`) },
  '\\S': { char: CHAR, fix: (s) => (/\S/.test(s) ? s : `x${[...s].slice(1).join('')}`) },
  '^(?!""$)[!-~]([ -~]*[!-~])?$': { char: PRINTABLE, fix: (s) => (s === '""' ? 'k' : s) },
  '^[A-Za-z0-9_-]+$': { char: URL_SAFE },
  '^[a-z0-9.-]+\\.json$': { char: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz0123456789.-'), fix: (s) => `${s || 'x'}.json` },
  '^key_[0-9a-f]{16}$': { char: fc.constantFrom(...'0123456789abcdef'), fix: (s) => `key_${s.padEnd(16, '0').slice(0, 16)}` },
};

function stringOf(f: Flat, times: SchemaArbitraryOptions['times']): fc.Arbitrary<string> {
  const format = f.first('format');
  const pattern = f.first('pattern') as string | undefined;
  if (format === 'date-time') return dateTimeOf(times);
  if (format === 'date')
    return fc.date({ min: times.from, max: times.until, noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10));
  if (format === 'uuid') return fc.tuple(fc.uuid(), fc.boolean()).map(([u, upper]) => (upper ? u.toUpperCase() : u));
  if (format !== undefined) throw new Error(`schemaArbitrary: no values for format ${JSON.stringify(format)}`);
  const known = pattern === undefined ? { char: CHAR } : PATTERNS[pattern];
  if (!known) throw new Error(`schemaArbitrary: no values for pattern ${pattern}`);
  const min = f.num('minLength', Math.max) ?? 0;
  const max = Math.min(f.num('maxLength', Math.min) ?? Infinity, min + 12);
  return fc.array(known.char, { minLength: min, maxLength: max }).map((cs) => (known.fix ?? ((s: string) => s))(cs.join('')));
}

/** An instant of the window, written in any of the forms DATE_TIME allows (offset, separator, fraction digits). */
function dateTimeOf(times: SchemaArbitraryOptions['times']): fc.Arbitrary<string> {
  const pad = (n: number, w = 2): string => String(Math.abs(n)).padStart(w, '0');
  return fc
    .record({
      at: fc.date({ min: times.from, max: times.until, noInvalidDate: true }),
      offset: fc.integer({ min: -12 * 4, max: 14 * 4 }).map((q) => q * 15),
      sep: fc.constantFrom('T', 't', ' '),
      digits: fc.integer({ min: 0, max: 9 }),
      zone: fc.constantFrom('Z', 'z', '+hh:mm', '+hhmm'),
    })
    .map(({ at, offset, sep, digits, zone }) => {
      const minutes = zone.startsWith('+') ? offset : 0;
      const local = new Date(at.getTime() + minutes * 60_000);
      const fraction = digits ? `.${pad(local.getUTCMilliseconds(), 3).padEnd(9, '0').slice(0, digits)}` : '';
      const sign = minutes < 0 ? '-' : '+';
      const tz = zone.startsWith('+') ? `${sign}${pad(Math.trunc(minutes / 60))}${zone === '+hh:mm' ? ':' : ''}${pad(minutes % 60)}` : zone;
      const text = `${pad(local.getUTCFullYear(), 4)}-${pad(local.getUTCMonth() + 1)}-${pad(local.getUTCDate())}${sep}${pad(local.getUTCHours())}:${pad(local.getUTCMinutes())}:${pad(local.getUTCSeconds())}${fraction}${tz}`;
      if (!new RegExp(DATE_TIME).test(text)) throw new Error(`schemaArbitrary: ${text} does not match DATE_TIME`);
      return text;
    });
}
