import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { validOrderRow } from '@ingest/domain/testing';
import { startTestGateway, TEST_INGEST_SECRET, type TestGateway } from '../../testing/testGateway.ts';

// "Every accepted value is storable" (docs/api.md "Value ranges") at the HTTP edge (buildApp,
// in-memory ports): a number JSON parsing would round is refused in each endpoint's error style
// (products item error, order row problem, inventory 422 naming the path), and so is a time
// outside the business range.
const gateways: TestGateway[] = [];
afterEach(async () => {
  await Promise.all(gateways.splice(0).map((g) => g.close()));
});
async function start(): Promise<TestGateway> {
  const gw = await startTestGateway();
  gateways.push(gw);
  return gw;
}

const auth = { 'x-ingest-secret': TEST_INGEST_SECRET, 'content-type': 'application/json' };
async function send(gw: TestGateway, path: string, body: string | Buffer, headers: Record<string, string> = {}) {
  const r = await fetch(`${gw.url}${path}`, { method: 'POST', headers: { ...auth, ...headers }, body });
  const text = await r.text();
  return { status: r.status, json: JSON.parse(text) as Record<string, unknown> };
}
const payload = (gw: TestGateway): Record<string, unknown> => (gw.appended[0]?.payload ?? {}) as Record<string, unknown>;
/** JSON with some numbers written as given: `num('9007199254740993')` stays those digits. */
const num = (digits: string) => `@@${digits}@@`;
const raw = (value: unknown) => JSON.stringify(value).replace(/"@@([^@]+)@@"/g, '$1');

describe('a price beyond 2^53 is refused, not stored rounded', () => {
  const ingest = (price: string) =>
    raw({
      shop: 'a.example',
      products: [
        { barcode: 'OK', product_name: 'Tea', current_price: 120 },
        { barcode: 'P', product_name: 'Tea', current_price: num(price) },
      ],
    });

  it.each([
    ['9007199254740993', '9007199254740992'],
    ['0.1000000000000000000001', '0.1'],
    ['1e400', 'Infinity'],
    ['1e-400', '0'],
    ['12345678901234567890', '12345678901234567000'],
  ])('current_price %s -> that item is rejected (it would become %s); the other item goes on', async (price, becomes) => {
    const gw = await start();
    const r = await send(gw, '/api/ingest/products', ingest(price));
    expect(r.status).toBe(202);
    expect(payload(gw)['items']).toEqual([
      { product: { barcode: 'OK', product_name: 'Tea', current_price: 120 } },
      { rejected: { barcode: 'P', error: `current_price ${price} cannot be stored exactly (it would become ${becomes})` } },
    ]);
  });

  it.each([
    '9007199254740992',
    '9007199254740991',
    '0.1',
    '1.50',
    '15e-1',
    '-0',
    '1e21',
    '5e-324',
    '1.7976931348623157e308',
    '123456789012345.6',
  ])('current_price %s is exactly what parsing gives -> accepted', async (price) => {
    const gw = await start();
    await send(gw, '/api/ingest/products', ingest(price));
    const items = payload(gw)['items'] as Array<{ product?: { current_price: number } }>;
    expect(items[1]?.product?.current_price).toBe(Number(price));
  });

  it('the same in a gzip body and in endpoint 1', async () => {
    const gw = await start();
    const body = raw({ products: [{ barcode: 'P', product_name: 'Tea', current_cost: num('9007199254740993') }] });
    await send(gw, '/api/products/bulk-upsert', gzipSync(body), {
      'x-cron-secret': 'c',
      'x-shop': 'a.example',
      'content-encoding': 'gzip',
    });
    expect(payload(gw)['items']).toEqual([
      { rejected: { barcode: 'P', error: 'current_cost 9007199254740993 cannot be stored exactly (it would become 9007199254740992)' } },
    ]);
  });

  it('the same in a UTF-16 body', async () => {
    const gw = await start();
    const body = Buffer.from(`\ufeff${ingest('9007199254740993')}`, 'utf16le');
    const r = await send(gw, '/api/ingest/products', body, { 'content-type': 'application/json; charset=utf-16' });
    expect(r.status).toBe(202);
    expect(JSON.stringify(payload(gw)['items'])).toContain('cannot be stored exactly');
  });

  it('a deep body whose numbers need the careful parse -> 400, not 500', async () => {
    const gw = await start();
    const r = await send(
      gw,
      '/api/ingest/products',
      `{"shop":"a.example","products":[],"x":${'['.repeat(20_000)}1e400${']'.repeat(20_000)}}`,
    );
    expect(r.status).toBe(400);
    expect(gw.appended).toEqual([]);
  });

  it('a NUL escaped in a UTF-16 body -> 400, like in UTF-8', async () => {
    const gw = await start();
    const body = Buffer.from(JSON.stringify({ shop: 'a.example', products: [{ barcode: 'B\u0000', product_name: 'x' }] }), 'utf16le');
    const r = await send(gw, '/api/ingest/products', body, { 'content-type': 'application/json; charset=utf-16le' });
    expect(r.status).toBe(400);
    expect(r.json['error']).toMatch(/NUL/);
  });
});

describe('inventory quantities are exact, and inventory_as_of lies in the business range', () => {
  const snapshot = (over: Record<string, unknown>, qty = '5') =>
    raw({
      shop: 'a.example',
      source_system: 'wms',
      location_id: '0190a000-0000-7000-8000-0000000000a1',
      lines: [
        { barcode: 'A', on_hand_qty: 1 },
        { barcode: 'B', on_hand_qty: num(qty) },
      ],
      ...over,
    });

  it('999999999999.99999999 reads as 1e12, an integer within the bound: refused 422 naming the path', async () => {
    const gw = await start();
    const r = await send(gw, '/api/ingest/inventory-snapshot', snapshot({}, '999999999999.99999999'));
    expect(r.status).toBe(422);
    expect(r.json).toEqual({
      ok: false,
      error_kind: 'invalid_payload',
      error: 'lines[1].on_hand_qty 999999999999.99999999 cannot be stored exactly (it would become 1000000000000)',
    });
    expect(gw.appended).toEqual([]);
  });

  it('a delta of -999999999999.9999999 (-1e12 once parsed, the bound) in endpoint 3 -> 422 naming the path', async () => {
    const gw = await start();
    const body = raw({
      shop: 'a.example',
      source_system: 'wms',
      mode: 'delta',
      lines: [{ barcode: 'A', location_id: 'x', on_hand_delta: num('-999999999999.9999999') }],
    });
    const r = await send(gw, '/api/inventory-levels/bulk-upsert', body);
    expect(r.status).toBe(422);
    expect(r.json['error']).toBe('lines[0].on_hand_delta -999999999999.9999999 cannot be stored exactly (it would become -1000000000000)');
  });

  it('the bounds themselves and an exponent that is exact are accepted', async () => {
    const gw = await start();
    const r = await send(gw, '/api/ingest/inventory-snapshot', snapshot({ inventory_as_of: '2000-01-01T00:00:00Z' }, '1e12'));
    expect(r.status).toBe(202);
    expect(payload(gw)['lines']).toEqual([
      { barcode: 'A', on_hand_qty: 1 },
      { barcode: 'B', on_hand_qty: 1e12 },
    ]);
  });

  it.each(['1999-12-31T23:59:59.999Z', '2000-01-01T08:59:59+09:00', '1970-01-01T00:00:00Z'])(
    'inventory_as_of %s -> 422 invalid_payload, like one in the future (D15b)',
    async (asOf) => {
      const gw = await start();
      for (const path of ['/api/ingest/inventory-snapshot', '/api/ingest/inventory-available', '/api/inventory-levels/bulk-upsert']) {
        const body =
          path === '/api/inventory-levels/bulk-upsert'
            ? {
                shop: 'a.example',
                source_system: 'wms',
                mode: 'absolute',
                inventory_as_of: asOf,
                lines: [{ barcode: 'A', location_id: 'x', on_hand_qty: 1 }],
              }
            : {
                shop: 'a.example',
                source_system: 'wms',
                mode: 'absolute',
                location_id: 'x',
                inventory_as_of: asOf,
                lines: [{ barcode: 'A', [path.endsWith('available') ? 'available_qty' : 'on_hand_qty']: 1 }],
              };
        if (path.endsWith('snapshot')) delete (body as { mode?: string }).mode;
        const r = await send(gw, path, JSON.stringify(body));
        expect(r.status, path).toBe(422);
        expect(r.json, path).toEqual({ ok: false, error_kind: 'invalid_payload', error: 'inventory_as_of is before 2000-01-01T00:00:00Z' });
      }
      expect(gw.appended).toEqual([]);
    },
  );
});

describe("order rows with a rounded number or a time outside the business range are that row's problem", () => {
  const refs = {
    barcode: '4900000000001',
    channel_id: '0190a000-0000-7000-8000-0000000000c1',
    location_id: '0190a000-0000-7000-8000-0000000000a1',
  };
  const rows = (...over: Array<Record<string, unknown>>) => over.map((o, i) => validOrderRow(refs, { line_instance_no: i + 1, ...o }));

  it('the command carries row_problems for the decider, the other rows as they are', async () => {
    const gw = await start();
    const body = raw({
      shop: 'a.example',
      rows: rows(
        {},
        { gross_amount_taxincl: num('9007199254740993'), discount_amount_taxincl: 0, net_amount_taxincl: num('9007199254740993') },
        { ordered_at: '1999-12-31T23:59:59Z' },
        { ordered_at: '2099-12-31T23:59:59.999Z', refunded_at: '2100-01-01T00:00:00Z', refund_amount: 1 },
        { ordered_at: '2000-01-01T00:00:00Z' },
      ),
    });
    const r = await send(gw, '/api/order-line-master/bulk-upsert', body);
    expect(r.status).toBe(202);
    const range = 'must be on or after 2000-01-01T00:00:00Z and before 2100-01-01T00:00:00Z';
    expect(payload(gw)['row_problems']).toEqual([
      {
        row_index: 1,
        field: 'gross_amount_taxincl',
        code: 'invalid_value',
        message: 'gross_amount_taxincl 9007199254740993 cannot be stored exactly (it would become 9007199254740992)',
      },
      {
        row_index: 1,
        field: 'net_amount_taxincl',
        code: 'invalid_value',
        message: 'net_amount_taxincl 9007199254740993 cannot be stored exactly (it would become 9007199254740992)',
      },
      { row_index: 2, field: 'ordered_at', code: 'invalid_value', message: `ordered_at ${range}` },
      { row_index: 3, field: 'refunded_at', code: 'invalid_value', message: `refunded_at ${range}` },
    ]);
  });

  it('rows with nothing of the kind add nothing to the command', async () => {
    const gw = await start();
    await send(gw, '/api/order-line-master/bulk-upsert', JSON.stringify({ shop: 'a.example', rows: rows({}, { ordered_at: 'garbage' }) }));
    expect(payload(gw)).not.toHaveProperty('row_problems');
  });
});
