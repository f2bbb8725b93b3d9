import type { ErrorObject } from 'ajv';
import { describe, expect, it } from 'vitest';
import { describeFirstError, pointerToPath, SchemaRegistry } from './validation.ts';

// Messages of D11 (`<field> required`, `<field> must be <type>`, limits named) produced from the
// JSON Schemas under schemas/http, and the path form of D11 (`lines[12].on_hand_qty`).
const registry = new SchemaRegistry();
const ingest = registry.validator<{ shop: string; products: unknown[] }>('http/products-ingest.request.json');
const bulk = registry.validator<{ products: unknown[] }>('http/products-bulk-upsert.request.json');
const product = registry.validator<Record<string, unknown>>('http/product.json');

function message(r: ReturnType<typeof ingest> | ReturnType<typeof bulk> | ReturnType<typeof product>): string {
  if (r.ok) throw new Error(`expected a validation failure, got ${JSON.stringify(r.value)}`);
  return r.failure.message;
}

describe('SchemaRegistry: products ingest request (endpoint 2)', () => {
  it('accepts a valid body', () => {
    const r = ingest({ shop: 'a.example', products: [{ barcode: 'B', product_name: 'N' }] });
    expect(r.ok).toBe(true);
  });

  it('missing shop -> `shop required`', () => {
    const r = ingest({ products: [] });
    expect(message(r)).toBe('shop required');
    expect(r.ok ? null : r.failure).toMatchObject({ path: 'shop', keyword: 'required' });
  });

  it('empty-string shop -> `shop required`', () => {
    const r = ingest({ shop: '', products: [] });
    expect(message(r)).toBe('shop required');
    expect(r.ok ? null : r.failure).toMatchObject({ path: 'shop', keyword: 'required' });
  });

  it('shop of the wrong type -> `shop must be string`', () => {
    expect(message(ingest({ shop: 42, products: [] }))).toBe('shop must be string');
    expect(message(ingest({ shop: null, products: [] }))).toBe('shop must be string');
    expect(message(ingest({ shop: ['a'], products: [] }))).toBe('shop must be string');
  });

  it('missing products -> `products required`', () => {
    expect(message(ingest({ shop: 'a.example' }))).toBe('products required');
  });

  it('products not an array -> `products must be array`', () => {
    expect(message(ingest({ shop: 'a.example', products: {} }))).toBe('products must be array');
    expect(message(ingest({ shop: 'a.example', products: 'x' }))).toBe('products must be array');
  });

  it('several problems: the first field in schema order is reported (shop before products)', () => {
    expect(message(ingest({ products: 'x' }))).toBe('shop required');
    expect(message(ingest({ shop: 1 }))).toBe('shop must be string');
  });

  it('more than 10,000 products -> a message naming the limit', () => {
    const products = Array.from({ length: 10_001 }, () => ({}));
    const m = message(ingest({ shop: 'a.example', products }));
    expect(m).toContain('10000');
    expect(m).toMatch(/^products /);
    expect(m).toBe('products exceeds the limit of 10000 items');
  });

  it('exactly 10,000 products is within the limit', () => {
    const products = Array.from({ length: 10_000 }, () => ({}));
    expect(ingest({ shop: 'a.example', products }).ok).toBe(true);
  });

  it('D27: an unknown top-level property is refused, not stripped -> `<field> is not allowed`', () => {
    const body: Record<string, unknown> = { shop: 'a.example', products: [], extra: 1, other: 'y' };
    const r = ingest(body);
    expect(r.ok ? null : r.failure).toEqual({ message: 'extra is not allowed', path: 'extra', keyword: 'unknown_field' });
    // Nothing is removed from the body.
    expect(Object.keys(body).sort()).toEqual(['extra', 'other', 'products', 'shop']);
  });

  it('D27: a missing required field is still reported before an unknown one', () => {
    expect(message(ingest({ shp: 'a.example', products: [] }))).toBe('shop required');
  });

  it('a root that is not an object is a type failure', () => {
    expect(message(ingest([]))).toBe('body must be object');
    expect(message(ingest('x'))).toBe('body must be object');
  });
});

describe('SchemaRegistry: products bulk-upsert request (endpoint 1)', () => {
  it('missing products -> `products required`', () => {
    expect(message(bulk({}))).toBe('products required');
  });

  it('products not an array -> `products must be array`', () => {
    expect(message(bulk({ products: 5 }))).toBe('products must be array');
  });

  it('more than 10,000 products -> a message naming the limit', () => {
    const m = message(bulk({ products: Array.from({ length: 10_001 }, () => ({})) }));
    expect(m).toContain('10000');
  });

  it('D27: a shop in the body is not part of endpoint 1 (x-shop is) and is refused', () => {
    expect(message(bulk({ shop: 'x.example', products: [] }))).toBe('shop is not allowed');
  });
});

describe('SchemaRegistry: product item', () => {
  it('accepts a full valid item', () => {
    const r = product({
      barcode: '4900000000001',
      product_name: 'Tea',
      sku: null,
      current_price: 150,
      current_cost: null,
      currency: 'JPY',
      is_active: true,
    });
    expect(r.ok).toBe(true);
  });

  it('current_price of the wrong type -> `current_price must be number or null`', () => {
    expect(message(product({ barcode: 'B', product_name: 'N', current_price: 'cheap' }))).toBe('current_price must be number or null');
    expect(message(product({ barcode: 'B', product_name: 'N', current_cost: true }))).toBe('current_cost must be number or null');
  });

  it('is_active of the wrong type -> `is_active must be boolean`', () => {
    expect(message(product({ barcode: 'B', product_name: 'N', is_active: 'yes' }))).toBe('is_active must be boolean');
  });

  it('missing or empty required fields -> `<field> required`', () => {
    expect(message(product({ product_name: 'N' }))).toBe('barcode required');
    expect(message(product({ barcode: 'B' }))).toBe('product_name required');
    expect(message(product({ barcode: '', product_name: 'N' }))).toBe('barcode required');
  });

  it('a too-long barcode names its limit', () => {
    expect(message(product({ barcode: 'x'.repeat(129), product_name: 'N' }))).toBe('barcode must be at most 128 characters');
  });

  it('D27: an unknown property is refused with code unknown_field, naming the first one', () => {
    const item = { barcode: 'B', product_name: 'N', color: 'red', nested: { a: 1 } };
    const r = product(item);
    expect(r.ok ? null : r.failure).toEqual({ message: 'color is not allowed', path: 'color', keyword: 'unknown_field' });
    expect(item).toHaveProperty('color', 'red');
  });

  it('D27: a prototype key is an unknown property like any other', () => {
    expect(message(product(JSON.parse('{"barcode":"B","product_name":"N","__proto__":{"x":1}}')))).toBe('__proto__ is not allowed');
  });
});

describe('D27: unknown fields in inventory lines and nested objects', () => {
  const snapshotLines = registry.validator('http/inventory-snapshot.lines.json');
  const levelsLines = registry.validator('http/inventory-levels.absolute-lines.json');
  const snapshot = registry.validator('http/inventory-snapshot.request.json');
  const locations = registry.validator('http/admin-locations.request.json');
  const daily = registry.validator('http/admin-daily-snapshot.request.json');
  const fail = (r: ReturnType<typeof snapshotLines>) => (r.ok ? null : r.failure);

  it('names the first unknown path of a line: `lines[3].avaliable_qty is not allowed`', () => {
    const lines = [0, 1, 2, 3].map((i) => ({ barcode: `B${i}`, on_hand_qty: 1 }));
    (lines[3] as Record<string, unknown>)['avaliable_qty'] = 5;
    expect(fail(snapshotLines({ lines }))).toEqual({
      message: 'lines[3].avaliable_qty is not allowed',
      path: 'lines[3].avaliable_qty',
      keyword: 'unknown_field',
    });
  });

  it('the earliest line wins, whether its problem is a bad value or an unknown field', () => {
    const lines = [
      { barcode: 'A', on_hand_qty: 1 },
      { barcode: 'B', on_hand_qty: -1 },
      { barcode: 'C', on_hand_qty: 1, x: 1 },
    ];
    expect(fail(snapshotLines({ lines }))?.path).toBe('lines[1].on_hand_qty');
    const swapped = [
      { barcode: 'A', on_hand_qty: 1 },
      { barcode: 'B', on_hand_qty: 1, x: 1 },
      { barcode: 'C', on_hand_qty: -1 },
    ];
    expect(fail(snapshotLines({ lines: swapped }))?.path).toBe('lines[1].x');
  });

  it('an unknown field of a line location object', () => {
    const lines = [{ barcode: 'A', location: { identifier_type: 't', identifier_value: 'v', kind: 'store' }, on_hand_qty: 1 }];
    expect(fail(levelsLines({ lines }))?.message).toBe('lines[0].location.kind is not allowed');
  });

  it('an unknown field of the top-level location object', () => {
    const body = { shop: 's', source_system: 'pos', location: { identifier_type: 't', identifier_value: 'v', extra: 1 }, lines: [] };
    expect(fail(snapshot(body))?.message).toBe('location.extra is not allowed');
  });

  it('admin registry bodies: items and identifiers', () => {
    expect(fail(locations({ shop: 's', locations: [{ name: 'n', code: 'x' }] }))?.message).toBe('locations[0].code is not allowed');
    const identifiers = [{ identifier_type: 't', identifier_value: 'v', note: 'x' }];
    expect(fail(locations({ shop: 's', locations: [{ name: 'n', identifiers }] }))?.message).toBe(
      'locations[0].identifiers[0].note is not allowed',
    );
    expect(fail(daily({ shop: 's', date: '2026-01-01' }))?.message).toBe('date is not allowed');
  });
});

describe('commands are read tolerantly (decoding what an older gateway appended)', () => {
  const envelope = registry.validator<Record<string, unknown>>('commands/envelope.json');
  const daily = registry.validator<Record<string, unknown>>('commands/daily-snapshot.json');

  it('an extra envelope or payload property is stripped, not refused', () => {
    const command = {
      command_id: '01900000-0000-7000-8000-000000000001',
      kind: 'inventory.daily_snapshot',
      shop: 's',
      received_at: '2026-11-01T00:00:00.000Z',
      source: { endpoint: '/api/admin/daily-snapshot' },
      payload: { snapshot_date: '2026-10-31', written_by: 'gateway 0.0.9' },
      trace_id: 'abc',
    };
    const r = envelope(command);
    expect(r.ok).toBe(true);
    expect(command).not.toHaveProperty('trace_id');
    const p = daily(command.payload);
    expect(p.ok && p.value).toEqual({ snapshot_date: '2026-10-31' });
  });
});

describe('describeFirstError', () => {
  const err = (e: Partial<ErrorObject> & Pick<ErrorObject, 'keyword' | 'instancePath' | 'params'>): ErrorObject => ({
    schemaPath: '#',
    ...e,
  });

  it('no errors -> a generic message', () => {
    expect(describeFirstError([])).toEqual({ message: 'invalid payload', path: '', keyword: 'unknown' });
  });

  it('required at a nested path names the full path', () => {
    const f = describeFirstError([err({ keyword: 'required', instancePath: '/lines/3', params: { missingProperty: 'barcode' } })]);
    expect(f).toEqual({ message: 'lines[3].barcode required', path: 'lines[3].barcode', keyword: 'required' });
  });

  it('type at a nested path uses the D11 path form', () => {
    const f = describeFirstError([err({ keyword: 'type', instancePath: '/lines/12/on_hand_qty', params: { type: 'integer' } })]);
    expect(f).toEqual({ message: 'lines[12].on_hand_qty must be integer', path: 'lines[12].on_hand_qty', keyword: 'type' });
  });

  it('minimum names the bound', () => {
    const f = describeFirstError([
      err({ keyword: 'minimum', instancePath: '/lines/0/on_hand_qty', params: { comparison: '>=', limit: 0 } }),
    ]);
    expect(f.message).toBe('lines[0].on_hand_qty must be >= 0');
  });

  it('maxItems names the limit', () => {
    const f = describeFirstError([err({ keyword: 'maxItems', instancePath: '/lines', params: { limit: 10000 } })]);
    expect(f.message).toBe('lines exceeds the limit of 10000 items');
  });

  it('the earliest array index wins (lines[3] before lines[12])', () => {
    const f = describeFirstError(
      [
        err({ keyword: 'type', instancePath: '/lines/12/on_hand_qty', params: { type: 'integer' } }),
        err({ keyword: 'type', instancePath: '/lines/3/on_hand_qty', params: { type: 'integer' } }),
      ],
      ['shop', 'lines'],
    );
    expect(f.path).toBe('lines[3].on_hand_qty');
  });

  it('the first field in schema order wins over a shallower later field', () => {
    const f = describeFirstError(
      [
        err({ keyword: 'type', instancePath: '/lines', params: { type: 'array' } }),
        err({ keyword: 'required', instancePath: '', params: { missingProperty: 'shop' } }),
      ],
      ['shop', 'lines'],
    );
    expect(f.message).toBe('shop required');
  });
});

describe('pointerToPath', () => {
  it('turns a JSON pointer into the D11 path form', () => {
    expect(pointerToPath('/lines/12/on_hand_qty')).toBe('lines[12].on_hand_qty');
  });

  it('handles the root, a top-level field, nested indexes and escapes', () => {
    expect(pointerToPath('')).toBe('');
    expect(pointerToPath('/shop')).toBe('shop');
    expect(pointerToPath('/rows/0/items/7/qty')).toBe('rows[0].items[7].qty');
    expect(pointerToPath('/a~1b/c~0d')).toBe('a/b.c~d');
  });
});
