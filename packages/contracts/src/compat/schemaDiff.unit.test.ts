import { describe, expect, it } from 'vitest';
import type { JsonObject } from '../schemaFiles.ts';
import { rootOf } from './refs.ts';
import { compareSchemas } from './schemaDiff.ts';
import type { Change, Role } from './types.ts';

// One rule of docs/api.md#changing-a-published-contract per test, on the smallest schemas that show it.
function diff(before: JsonObject, after: JsonObject, role: Role = 'event', extra: Record<string, JsonObject> = {}): Change[] {
  const out: Change[] = [];
  const old = new Map([['schemas/events/e.json', before], ...Object.entries(extra)]);
  const now = new Map([['schemas/events/e.json', after], ...Object.entries(extra)]);
  compareSchemas(
    { old, new: now, role, report: (c) => out.push(c) },
    rootOf(old, 'schemas/events/e.json'),
    rootOf(now, 'schemas/events/e.json'),
  );
  return out;
}
const rules = (changes: Change[]) => changes.map((c) => c.rule);
const obj = (properties: JsonObject, more: JsonObject = {}): JsonObject => ({ type: 'object', properties, ...more });

describe('compareSchemas: what a reader of the schema loses', () => {
  it('nothing, when only descriptions, titles and examples change, or a field is added', () => {
    const before = obj({ a: { type: 'string', description: 'old' } }, { required: ['a'] });
    const after = obj(
      { a: { type: 'string', description: 'new', examples: ['x'] }, b: { type: 'integer' } },
      { required: ['a'], title: 'T' },
    );
    expect(diff(before, after)).toEqual([]);
  });

  it('field-removed: a renamed field is a removal, named with the field that appeared', () => {
    const changes = diff(obj({ barcode: { type: 'string' } }), obj({ gtin: { type: 'string' } }));
    expect(changes).toEqual([
      {
        rule: 'field-removed',
        role: 'event',
        what: 'field `barcode` removed (added: `gtin`: a rename?)',
        where: 'schemas/events/e.json#/properties/barcode',
      },
    ]);
  });

  it('field-removed also for a request: D27 refuses a field the schema no longer lists', () => {
    expect(
      rules(diff(obj({ a: {}, b: {} }, { additionalProperties: false }), obj({ a: {} }, { additionalProperties: false }), 'request')),
    ).toEqual(['field-removed']);
  });

  it('type-narrowed: a type leaves a union (null no longer accepted); integer -> number widens', () => {
    const changes = diff(obj({ a: { type: ['string', 'null'] } }), obj({ a: { type: 'string' } }));
    expect(changes.map((c) => [c.rule, c.where])).toEqual([['type-narrowed', 'schemas/events/e.json#/properties/a']]);
    expect(changes[0]?.what).toContain('null no longer accepted');
    expect(diff(obj({ n: { type: 'integer' } }), obj({ n: { type: 'number' } }))).toEqual([]);
    expect(rules(diff(obj({ n: { type: 'number' } }), obj({ n: { type: 'integer' } })))).toEqual(['type-narrowed']);
    expect(rules(diff(obj({ n: {} }), obj({ n: { type: 'string' } })))).toEqual(['type-narrowed']);
  });

  it('enum-value-removed: an enum value or a const that is no longer accepted; an added value is not', () => {
    const before = obj({ mode: { enum: ['absolute', 'delta'] } });
    expect(diff(before, obj({ mode: { enum: ['absolute'] } }))).toEqual([
      expect.objectContaining({ rule: 'enum-value-removed', what: 'value "delta" no longer accepted' }),
    ]);
    expect(diff(before, obj({ mode: { enum: ['absolute', 'delta', 'both'] } }))).toEqual([]);
    expect(rules(diff(obj({ v: { const: 1 } }), obj({ v: { const: 2 } })))).toEqual(['enum-value-removed']);
    expect(rules(diff(obj({ v: { type: 'string' } }), obj({ v: { type: 'string', enum: ['a'] } })))).toEqual(['type-narrowed']);
  });

  it('bound-tightened: maxLength or maximum lowered or added, minLength raised; loosened bounds are fine', () => {
    const before = obj({ s: { type: 'string', maxLength: 255, minLength: 1 }, n: { type: 'integer', maximum: 100 } });
    const lowered = diff(before, obj({ s: { type: 'string', maxLength: 100, minLength: 2 }, n: { type: 'integer', maximum: 10 } }));
    expect(lowered.map((c) => c.what)).toEqual([
      'maxLength lowered from 255: 100',
      'minLength raised from 1: 2',
      'maximum lowered from 100: 10',
    ]);
    expect(rules(lowered)).toEqual(['bound-tightened', 'bound-tightened', 'bound-tightened']);
    expect(diff(before, obj({ s: { type: 'string', maxLength: 1000 }, n: { type: 'integer' } }))).toEqual([]);
    expect(rules(diff(obj({ a: { type: 'array' } }), obj({ a: { type: 'array', maxItems: 5 } })))).toEqual(['bound-tightened']);
  });

  it('format-added: a format or pattern added or changed (a removed one widens)', () => {
    expect(diff(obj({ shop: { type: 'string' } }), obj({ shop: { type: 'string', format: 'hostname' } }))).toEqual([
      expect.objectContaining({ rule: 'format-added', what: 'format added: "hostname"', where: 'schemas/events/e.json#/properties/shop' }),
    ]);
    expect(rules(diff(obj({ k: { type: 'string', pattern: '^a' } }), obj({ k: { type: 'string', pattern: '^b' } })))).toEqual([
      'format-added',
    ]);
    expect(diff(obj({ t: { type: 'string', format: 'date-time' } }), obj({ t: { type: 'string' } }))).toEqual([]);
  });

  it('required-added: for a request, an event or a command; a response may promise more', () => {
    const before = obj({ a: { type: 'string' } }, { required: [] });
    const after = obj({ a: { type: 'string' }, region: { type: 'string' } }, { required: ['region'] });
    expect(diff(before, after, 'request')).toEqual([
      {
        rule: 'required-added',
        role: 'request',
        what: 'field `region` is now required',
        where: 'schemas/events/e.json#/properties/region',
      },
    ]);
    expect(rules(diff(before, after, 'command'))).toEqual(['required-added']);
    expect(diff(before, after, 'response')).toEqual([]);
  });

  it('type-narrowed: additionalProperties becomes false', () => {
    expect(rules(diff(obj({ a: {} }), obj({ a: {} }, { additionalProperties: false })))).toEqual(['type-narrowed']);
  });

  it('type-narrowed: a oneOf added (the request that had both, or neither, is refused), a branch removed; a branch added widens', () => {
    const before = obj({ location_id: { type: 'string' }, location: { type: 'object' } });
    const xor = { ...before, oneOf: [{ required: ['location_id'] }, { required: ['location'] }] };
    expect(diff(before, xor, 'request')).toEqual([expect.objectContaining({ rule: 'type-narrowed', what: 'oneOf added' })]);
    const anyOf = (...types: string[]) => obj({ v: { anyOf: types.map((type) => ({ type })) } });
    expect(rules(diff(anyOf('string', 'integer'), anyOf('string')))).toEqual(['type-narrowed']);
    expect(diff(anyOf('string'), anyOf('string', 'integer'))).toEqual([]);
  });

  it('type-narrowed: allOf gaining a branch, a new or changed if/then/else condition', () => {
    expect(rules(diff({ allOf: [{ type: 'object' }] }, { allOf: [{ type: 'object' }, { required: ['a'] }] }))).toEqual(['type-narrowed']);
    const cond = (then: JsonObject) => ({ if: { properties: { mode: { const: 'delta' } } }, then, else: { required: ['x'] } });
    expect(rules(diff({}, cond({ required: ['d'] })))).toEqual(['type-narrowed']);
    expect(rules(diff(cond({ required: ['d'] }), cond({ required: ['d', 'e'] }), 'request'))).toEqual(['required-added']);
  });

  it('a keyword the walker does not compare is a narrowing when it appears or changes (fails safe)', () => {
    expect(diff(obj({ a: { type: 'array' } }), obj({ a: { type: 'array', uniqueItems: true } }))).toEqual([
      expect.objectContaining({ rule: 'type-narrowed', what: '`uniqueItems` added or changed (it may refuse values it accepted)' }),
    ]);
  });

  it('follows $refs between served files and names the file a developer edits', () => {
    const common = { $defs: { qty: { type: 'integer', minimum: 0 } } };
    const before = obj({ q: { $ref: '../http/common.json#/$defs/qty', description: 'on hand' } });
    const changed = { $defs: { qty: { type: 'integer', minimum: 1 } } };
    const out: Change[] = [];
    const old = new Map([
      ['schemas/events/e.json', before],
      ['schemas/http/common.json', common],
    ]);
    const now = new Map([
      ['schemas/events/e.json', before],
      ['schemas/http/common.json', changed],
    ]);
    compareSchemas(
      { old, new: now, role: 'event', report: (c) => out.push(c) },
      rootOf(old, 'schemas/events/e.json'),
      rootOf(now, 'schemas/events/e.json'),
    );
    expect(out).toEqual([expect.objectContaining({ rule: 'bound-tightened', where: 'schemas/http/common.json#/$defs/qty' })]);
  });

  it('a bundled component is named by the schemas/ file in its $comment, and a self-reference ends', () => {
    const tree = (extra: JsonObject) => ({
      $comment: 'schemas/http/tree.json',
      type: 'object',
      properties: { children: { type: 'array', items: { $ref: '#' } }, ...extra },
    });
    expect(diff(tree({ name: { type: 'string' } }), tree({}))).toEqual([
      expect.objectContaining({ rule: 'field-removed', where: 'schemas/http/tree.json#/properties/name' }),
    ]);
  });
});
