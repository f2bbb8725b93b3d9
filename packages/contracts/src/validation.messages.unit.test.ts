import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ErrorObject } from 'ajv';
import { afterAll, describe, expect, it } from 'vitest';
import { readSchemaFiles } from './schemaFiles.ts';
import { describeFirstError, pointerToPath, SchemaRegistry } from './validation.ts';

// The rest of D11's message catalogue, the uuid form a PostgreSQL uuid column takes, and how the
// registry reads schemas/. Pinned one by one because the gateway answers these texts verbatim.

const registry = new SchemaRegistry();
const failure = (r: { ok: true } | { ok: false; failure: unknown }) => (r.ok ? null : r.failure);
const err = (e: Partial<ErrorObject> & Pick<ErrorObject, 'keyword' | 'instancePath' | 'params'>): ErrorObject => ({
  schemaPath: '#',
  ...e,
});

describe('D11 messages of the schema keywords, as requests meet them', () => {
  const ingest = registry.validator('http/products-ingest.request.json');
  const locations = registry.validator('http/admin-locations.request.json');
  const snapshot = registry.validator('http/inventory-snapshot.request.json');
  const available = registry.validator('http/inventory-available.request.json');
  const body = { shop: 's.example', source_system: 'pos', location_id: 'L', lines: [] };

  it('a shop of blanks only is missing: `shop required` (pattern \\S)', () => {
    expect(failure(ingest({ shop: '   ', products: [] }))).toEqual({ message: 'shop required', path: 'shop', keyword: 'required' });
  });

  it('an empty list where one item is needed names the minimum', () => {
    expect(failure(locations({ shop: 's.example', locations: [] }))).toEqual({
      message: 'locations must have at least 1 item(s)',
      path: 'locations',
      keyword: 'minItems',
    });
  });

  it('a mode outside its enum lists the allowed values', () => {
    expect(failure(available({ ...body, mode: 'relative' }))).toEqual({
      message: 'mode must be one of absolute, delta',
      path: 'mode',
      keyword: 'enum',
    });
  });

  it('an inventory_as_of that is not a date-time names the format', () => {
    expect(failure(snapshot({ ...body, inventory_as_of: 'yesterday' }))).toEqual({
      message: 'inventory_as_of must be a valid date-time',
      path: 'inventory_as_of',
      keyword: 'format',
    });
  });
});

describe('uuid: the canonical text only, as a PostgreSQL uuid column takes it', () => {
  const locations = registry.validator('http/admin-locations.request.json');
  const withId = (location_id: string) => locations({ shop: 's.example', locations: [{ location_id, name: 'Store 1', identifiers: [] }] });
  const ID = '0190a000-0000-7000-8000-0000000000a1';

  it('accepts the canonical form, in either case', () => {
    expect(withId(ID).ok).toBe(true);
    expect(withId(ID.toUpperCase()).ok).toBe(true);
  });

  it('refuses `urn:uuid:` (which ajv-formats would accept) and anything around the uuid', () => {
    const refused = { message: 'locations[0].location_id must be a valid uuid', path: 'locations[0].location_id', keyword: 'format' };
    expect(failure(withId(`urn:uuid:${ID}`))).toEqual(refused);
    expect(failure(withId(`x${ID}`))).toEqual(refused);
    expect(failure(withId(`${ID}0`))).toEqual(refused);
  });
});

describe('describeFirstError: every keyword in the spec style (D11)', () => {
  const one = (e: Parameters<typeof err>[0]) => describeFirstError([err(e)]);

  it('minLength 1 is `required`; a longer minimum is named', () => {
    expect(one({ keyword: 'minLength', instancePath: '/shop', params: { limit: 1 } })).toEqual({
      message: 'shop required',
      path: 'shop',
      keyword: 'required',
    });
    expect(one({ keyword: 'minLength', instancePath: '/code', params: { limit: 3 } })).toEqual({
      message: 'code must be at least 3 characters',
      path: 'code',
      keyword: 'minLength',
    });
  });

  it('maxLength names the limit', () => {
    expect(one({ keyword: 'maxLength', instancePath: '/lines/2/barcode', params: { limit: 128 } })).toEqual({
      message: 'lines[2].barcode must be at most 128 characters',
      path: 'lines[2].barcode',
      keyword: 'maxLength',
    });
  });

  it('the bounds name their comparison and limit', () => {
    const bound = (keyword: string, comparison: string, limit: number) =>
      one({ keyword, instancePath: '/rows/0/tax_rate', params: { comparison, limit } });
    expect(bound('maximum', '<=', 1)).toEqual({ message: 'rows[0].tax_rate must be <= 1', path: 'rows[0].tax_rate', keyword: 'maximum' });
    expect(bound('exclusiveMinimum', '>', 0)).toEqual({
      message: 'rows[0].tax_rate must be > 0',
      path: 'rows[0].tax_rate',
      keyword: 'exclusiveMinimum',
    });
    expect(bound('exclusiveMaximum', '<', 1)).toEqual({
      message: 'rows[0].tax_rate must be < 1',
      path: 'rows[0].tax_rate',
      keyword: 'exclusiveMaximum',
    });
  });

  it('a pattern other than "not blank" is an invalid format', () => {
    expect(one({ keyword: 'pattern', instancePath: '/currency', params: { pattern: '^[A-Z]{3}$' } })).toEqual({
      message: 'currency has an invalid format',
      path: 'currency',
      keyword: 'pattern',
    });
  });

  it('any other keyword: ajv`s own words after the path, or `is invalid`, and `body` for the root', () => {
    expect(one({ keyword: 'const', instancePath: '/ok', params: { allowedValue: true }, message: 'must be equal to constant' })).toEqual({
      message: 'ok must be equal to constant',
      path: 'ok',
      keyword: 'const',
    });
    expect(one({ keyword: 'uniqueItems', instancePath: '', params: {} })).toEqual({
      message: 'body is invalid',
      path: '',
      keyword: 'uniqueItems',
    });
  });
});

describe('describeFirstError: the alternatives of oneOf, anyOf and if are not reported when a plainer error is there', () => {
  for (const keyword of ['oneOf', 'anyOf', 'if']) {
    it(`a ${keyword} failure listed first gives way to the required field behind it`, () => {
      const f = describeFirstError([
        err({ keyword, instancePath: '/lines/0', params: {}, message: 'must match a schema' }),
        err({ keyword: 'required', instancePath: '/lines/0', params: { missingProperty: 'barcode' } }),
      ]);
      expect(f).toEqual({ message: 'lines[0].barcode required', path: 'lines[0].barcode', keyword: 'required' });
    });
  }

  it('when such a failure is all there is, it is still reported', () => {
    const f = describeFirstError([
      err({ keyword: 'oneOf', instancePath: '', params: {}, message: 'must match exactly one schema in oneOf' }),
    ]);
    expect(f).toEqual({ message: 'body must match exactly one schema in oneOf', path: '', keyword: 'oneOf' });
  });
});

describe('pointerToPath: only a whole-number segment is an index', () => {
  it('a field whose name ends or starts with digits stays a field (`category_l1`, `2nd`)', () => {
    expect(pointerToPath('/products/0/category_l1')).toBe('products[0].category_l1');
    expect(pointerToPath('/lines/10/2nd')).toBe('lines[10].2nd');
  });
});

describe('SchemaRegistry: how schemas/ is read', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });
  /** A schemas/ of its own: one group `http` holding the given files. */
  function schemasDir(files: Record<string, unknown>): string {
    const dir = mkdtempSync(join(tmpdir(), 'schemas-'));
    dirs.push(dir);
    mkdirSync(join(dir, 'http'));
    for (const [name, content] of Object.entries(files))
      writeFileSync(join(dir, 'http', name), typeof content === 'string' ? content : JSON.stringify(content));
    return dir;
  }
  const item = { $id: 'https://schemas.ingest.local/http/item.json', type: 'object', properties: { n: { type: 'integer' } } };

  it('only the .json files of a group are schemas: a note beside them is not read', () => {
    const r = new SchemaRegistry(schemasDir({ 'item.json': item, 'README.md': '# not a schema' }));
    expect(r.validator('http/item.json')({ n: 1 }).ok).toBe(true);
  });

  it('the published contracts beside the groups (schemas/published/) are not read as schemas', () => {
    const dir = schemasDir({ 'item.json': item });
    mkdirSync(join(dir, 'published', 'released'), { recursive: true });
    writeFileSync(join(dir, 'published', 'openapi.json'), JSON.stringify({ openapi: '3.1.0' }));
    writeFileSync(join(dir, 'published', 'released', 'openapi.json'), JSON.stringify({ openapi: '3.1.0' }));
    expect(new SchemaRegistry(dir).validator('http/item.json')({ n: 1 }).ok).toBe(true);
    expect(readSchemaFiles(dir).map((f) => f.name)).toEqual(['http/item.json']);
  });

  it('a name no schema has is an error naming it', () => {
    const r = new SchemaRegistry(schemasDir({ 'item.json': item }));
    expect(() => r.validator('http/missing.json')).toThrow('unknown schema http/missing.json');
  });

  it('schemas are compiled in strict mode: a keyword JSON Schema does not know is refused, not ignored', () => {
    const r = new SchemaRegistry(schemasDir({ 'item.json': { ...item, properties: { n: { type: 'integer', minimun: 0 } } } }));
    expect(() => r.validator('http/item.json')).toThrow(/strict mode: unknown keyword: "minimun"/);
  });

  it('validating never fills in defaults: the value is left as the client sent it', () => {
    const r = new SchemaRegistry(schemasDir({ 'item.json': { ...item, properties: { n: { type: 'integer', default: 7 } } } }));
    const value: Record<string, unknown> = {};
    expect(r.validator('http/item.json')(value).ok).toBe(true);
    expect(value).toEqual({});
  });
});
