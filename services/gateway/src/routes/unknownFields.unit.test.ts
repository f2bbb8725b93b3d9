import { describe, expect, it } from 'vitest';
import { postJson, TEST_CRON_SECRET, TEST_INGEST_SECRET, useTestGateway } from '../../testing/testGateway.ts';

// D27 at the HTTP edge of every endpoint: a body field the endpoint's schema does not define is
// refused, never silently dropped. Top level -> 400 `<field> is not allowed`; inside a products
// item -> that item's `{barcode, error: 'unknown_field: <field> is not allowed'}`, the others go on;
// inside an inventory line -> 422 invalid_payload naming the first unknown path. Order rows are
// checked by the decider (validateRow.unit.test.ts); the gateway asks for it in the command.
const gw = useTestGateway();

const LOC = '0190a000-0000-7000-8000-0000000000a1';

async function post(path: string, body: unknown, headers: Record<string, string> = { 'x-ingest-secret': TEST_INGEST_SECRET }) {
  const { status, json } = await postJson(`${gw.url}${path}`, body, headers);
  return { status, json: json as Record<string, unknown> };
}

async function refused(path: string, body: unknown, status: number, expected: Record<string, unknown>, headers?: Record<string, string>) {
  const r = await post(path, body, headers);
  expect(r, path).toEqual({ status, json: expected });
  expect(gw.appended, `${path}: nothing appended`).toEqual([]);
}

const notAllowed = (field: string) => ({ ok: false, error: `${field} is not allowed` });
const invalidPayload = (error: string) => ({ ok: false, error_kind: 'invalid_payload', error });

describe('D27: unknown top-level fields -> 400 `<field> is not allowed`', () => {
  it.each([
    ['/api/ingest/products', { shop: 'a.example', products: [], extra: 1 }],
    ['/api/ingest/inventory-snapshot', { shop: 'a.example', source_system: 'pos', location_id: LOC, lines: [], extra: 1 }],
    [
      '/api/ingest/inventory-available',
      { shop: 'a.example', source_system: 'pos', mode: 'absolute', location_id: LOC, lines: [], extra: 1 },
    ],
    ['/api/inventory-levels/bulk-upsert', { shop: 'a.example', source_system: 'pos', mode: 'absolute', lines: [], extra: 1 }],
    ['/api/order-line-master/bulk-upsert', { shop: 'a.example', rows: [{}], extra: 1 }],
    ['/api/admin/locations', { shop: 'a.example', locations: [{ name: 'Store' }], extra: 1 }],
    ['/api/admin/channels', { shop: 'a.example', channels: [{ name: 'Web' }], extra: 1 }],
    ['/api/admin/daily-snapshot', { shop: 'a.example', extra: 1 }],
  ])('%s', async (path, body) => {
    await refused(path, body, 400, notAllowed('extra'));
  });

  it('the cron-secret endpoint 1: a shop in the body (x-shop carries it) is refused too', async () => {
    await refused('/api/products/bulk-upsert', { shop: 'a.example', products: [] }, 400, notAllowed('shop'), {
      'x-cron-secret': TEST_CRON_SECRET,
      'x-shop': 'a.example',
    });
  });

  it('a known field missing is still reported before an unknown one (D11)', async () => {
    await refused('/api/ingest/products', { shp: 'a.example', products: [] }, 400, { ok: false, error: 'shop required' });
  });
});

describe('D27: unknown fields inside a products item -> that item is rejected with unknown_field, the others go on', () => {
  const items = [
    { barcode: 'B1', product_name: 'Tea' },
    { barcode: 'B2', product_name: 'Coffee', colour: 'red', size: 'L' },
    { barcode: 'B3', product_name: 'Milk', current_price: 120 },
  ];
  const expected = [
    { product: { barcode: 'B1', product_name: 'Tea' } },
    { rejected: { barcode: 'B2', error: 'unknown_field: colour is not allowed' } },
    { product: { barcode: 'B3', product_name: 'Milk', current_price: 120 } },
  ];

  it('endpoint 2 (ingest)', async () => {
    const r = await post('/api/ingest/products', { shop: 'a.example', products: items });
    expect(r.status).toBe(202);
    expect(gw.appended.map((c) => c.payload)).toEqual([{ response: 'ingest', items: expected }]);
  });

  it('endpoint 1 (cron secret), the same per-item shape (D7)', async () => {
    const r = await post('/api/products/bulk-upsert', { products: items }, { 'x-cron-secret': TEST_CRON_SECRET, 'x-shop': 'a.example' });
    expect(r.status).toBe(202);
    expect(gw.appended.map((c) => c.payload)).toEqual([{ response: 'bulk_upsert', items: expected }]);
  });
});

describe('D27: order rows -> the command asks the decider to reject rows with unknown fields', () => {
  it('the rows are carried as sent, with unknown_fields reject', async () => {
    const rows = [{ barcode: 'B1', quantity: 2 }];
    const r = await post('/api/order-line-master/bulk-upsert', { shop: 'a.example', rows });
    expect(r.status).toBe(202);
    expect(gw.appended[0]?.payload).toMatchObject({ rows, unknown_fields: 'reject' });
  });
});

describe('D27: unknown fields inside an inventory line -> 422 invalid_payload naming the first unknown path', () => {
  const lines = (n: number, extra: Record<string, unknown>, at = 3) =>
    Array.from({ length: n }, (_, i) => ({ barcode: `B${i}`, on_hand_qty: 1, ...(i === at ? extra : {}) }));

  it('snapshot: `lines[3].avaliable_qty`', async () => {
    const body = { shop: 'a.example', source_system: 'pos', location_id: LOC, lines: lines(5, { avaliable_qty: 4 }) };
    await refused('/api/ingest/inventory-snapshot', body, 422, invalidPayload('lines[3].avaliable_qty is not allowed'));
  });

  it('available (absolute and delta)', async () => {
    const abs = [
      { barcode: 'A', available_qty: 1 },
      { barcode: 'B', available_qty: 1, on_hand_qty: 3 },
    ];
    await refused(
      '/api/ingest/inventory-available',
      { shop: 'a.example', source_system: 'pos', mode: 'absolute', location_id: LOC, lines: abs },
      422,
      invalidPayload('lines[1].on_hand_qty is not allowed'),
    );
    const delta = [{ barcode: 'A', available_delta: -1, availabel_delta: 2 }];
    await refused(
      '/api/ingest/inventory-available',
      { shop: 'a.example', source_system: 'pos', mode: 'delta', location_id: LOC, lines: delta },
      422,
      invalidPayload('lines[0].availabel_delta is not allowed'),
    );
  });

  it('levels: a line field, and a field of a line location object', async () => {
    const base = { shop: 'a.example', source_system: 'pos', mode: 'absolute' };
    await refused(
      '/api/inventory-levels/bulk-upsert',
      { ...base, lines: [{ barcode: 'A', location_id: LOC, on_hand_qty: 1, on_hand: 2 }] },
      422,
      invalidPayload('lines[0].on_hand is not allowed'),
    );
    const location = { identifier_type: 'store_code', identifier_value: 'S1', kind: 'store' };
    await refused(
      '/api/inventory-levels/bulk-upsert',
      { ...base, lines: [{ barcode: 'A', location, on_hand_qty: 1 }] },
      422,
      invalidPayload('lines[0].location.kind is not allowed'),
    );
  });

  it('a field of the top-level location object is a top-level problem: 400, like its other bad values (D11)', async () => {
    const location = { identifier_type: 'store_code', identifier_value: 'S1', extra: 1 };
    await refused(
      '/api/ingest/inventory-snapshot',
      { shop: 'a.example', source_system: 'pos', location, lines: [] },
      400,
      notAllowed('location.extra'),
    );
  });
});

describe('D27: admin registry bodies', () => {
  it('a field of a location, of its identifiers, and of a channel -> 400', async () => {
    await refused(
      '/api/admin/locations',
      { shop: 'a.example', locations: [{ name: 'Store', code: 'S1' }] },
      400,
      notAllowed('locations[0].code'),
    );
    const identifiers = [{ identifier_type: 'store_code', identifier_value: 'S1', primary: true }];
    await refused(
      '/api/admin/locations',
      { shop: 'a.example', locations: [{ name: 'Store', identifiers }] },
      400,
      notAllowed('locations[0].identifiers[0].primary'),
    );
    await refused('/api/admin/channels', { shop: 'a.example', channels: [{ name: 'Web', url: 'x' }] }, 400, notAllowed('channels[0].url'));
  });

  it('control: the same bodies without the unknown fields are accepted', async () => {
    expect((await post('/api/admin/locations', { shop: 'a.example', locations: [{ name: 'Store' }] })).status).toBe(202);
    expect((await post('/api/admin/channels', { shop: 'a.example', channels: [{ name: 'Web' }] })).status).toBe(202);
    expect(gw.appended).toHaveLength(2);
  });
});
