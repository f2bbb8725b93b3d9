// Every kind of write, end to end through the containers (docs/api.md), each answer checked for its
// status and counts: products by both endpoints (one of them asynchronous: 202, then the stored
// result), the locations and channels registry, an inventory snapshot, available deltas, levels
// (absolute, then a delta that takes a level to zero: a stock_zero), order lines, the daily snapshot.
import { send, type Answer } from './http.ts';

export interface Gateway {
  port: number;
  ingestSecret: string;
  cronSecret: string;
}

export interface WriteCheck {
  name: string;
  ok: boolean;
  detail: string;
}

/** The levels the writes take to zero, which the stock-zero topic must then carry. */
export interface ExpectedStockEvent {
  topic: 'stockZero' | 'stockRestored';
  barcode: string;
  locationId: string;
  seq: number;
}

const GREEN = '4901234567894';
const BARLEY = '4901234567900';
const JASMINE = '4901234567917';
const UNKNOWN = '4999999999999';

type Expect = Record<string, string | number | boolean | ((v: any) => boolean)>;

function check(name: string, a: Answer, status: number, fields: Expect): WriteCheck {
  const wrong: string[] = [];
  if (a.status !== status) wrong.push(`status ${a.status ?? a.error}, expected ${status}`);
  for (const [k, want] of Object.entries(fields)) {
    const got = a.body?.[k];
    const ok = typeof want === 'function' ? want(got) : got === want;
    if (!ok) wrong.push(`${k} = ${JSON.stringify(got)}${typeof want === 'function' ? '' : `, expected ${JSON.stringify(want)}`}`);
  }
  return { name, ok: wrong.length === 0, detail: wrong.length ? `${wrong.join('; ')}: ${a.text.slice(0, 300)}` : `${a.status}` };
}

const length = (n: number) => (v: unknown) => Array.isArray(v) && v.length === n;

/** Today in the business time zone (YYYY-MM-DD): the date the snapshot endpoint gives its daily rows. */
const businessDate = (timeZone: string): string =>
  new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date());

export async function writeEveryKind(
  gw: Gateway,
  shop: string,
  businessTimezone: string,
): Promise<{ checks: WriteCheck[]; stockEvents: ExpectedStockEvent[] }> {
  const ingest = { 'x-ingest-secret': gw.ingestSecret };
  const post = (path: string, body: unknown, headers: Record<string, string> = ingest) => send(gw.port, 'POST', path, headers, body);
  const checks: WriteCheck[] = [];

  const bulk = await post(
    '/api/products/bulk-upsert',
    {
      products: [
        { barcode: GREEN, product_name: 'Green tea 500ml', brand: 'Acme', current_price: 160, current_cost: 90 },
        { barcode: BARLEY, product_name: 'Barley tea 500ml', current_price: 150 },
        { product_name: 'no barcode' },
      ],
    },
    { 'x-cron-secret': gw.cronSecret, 'x-shop': shop },
  );
  checks.push(
    check('products bulk-upsert (x-cron-secret + x-shop)', bulk, 200, { created: 2, updated: 0, unchanged: 0, errors: length(1) }),
  );

  const products = await post('/api/ingest/products', {
    shop,
    products: [
      { barcode: GREEN, product_name: 'Green tea 500ml', current_price: 150 },
      { barcode: BARLEY, product_name: 'Barley tea 500ml' },
      { barcode: JASMINE, product_name: 'Jasmine tea 500ml', is_active: false },
    ],
  });
  checks.push(check('POST /api/ingest/products', products, 200, { created: 1, updated: 1, unchanged: 1, errors_count: 0 }));

  // Asynchronous: 202 with the command's URL, then the stored result from GET /api/commands/{id}.
  const accepted = await post(
    '/api/ingest/products',
    { shop, products: [{ barcode: JASMINE, product_name: 'Jasmine tea 500ml', current_price: 170 }] },
    { ...ingest, prefer: 'respond-async' },
  );
  checks.push(
    check('POST /api/ingest/products, Prefer: respond-async', accepted, 202, {
      status: 'accepted',
      result_url: (v) => typeof v === 'string',
    }),
  );
  let result: Answer = accepted;
  for (let i = 0; i < 120 && typeof accepted.body?.result_url === 'string'; i++) {
    result = await send(gw.port, 'GET', accepted.body.result_url as string, ingest);
    if (result.status !== 202) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  checks.push(check('GET /api/commands/{id} of the 202', result, 200, { created: 0, updated: 1, unchanged: 0 }));

  const locations = await post('/api/admin/locations', {
    shop,
    locations: [
      { name: 'Shibuya store', identifiers: [{ identifier_type: 'pos_store_code', identifier_value: 'S001' }] },
      { name: 'Chiba warehouse', identifiers: [{ identifier_type: 'wms_code', identifier_value: 'WH-CHIBA' }] },
    ],
  });
  checks.push(check('POST /api/admin/locations', locations, 200, { shop, locations: length(2) }));
  const shibuya = String(locations.body?.locations?.[0]?.location_id ?? '');

  const channels = await post('/api/admin/channels', { shop, channels: [{ name: 'Online store' }] });
  checks.push(check('POST /api/admin/channels', channels, 200, { shop, channels: length(1) }));
  const channel = String(channels.body?.channels?.[0]?.channel_id ?? '');

  const snapshot = await post('/api/ingest/inventory-snapshot', {
    shop,
    source_system: 'pos',
    location: { identifier_type: 'pos_store_code', identifier_value: 'S001' },
    lines: [
      { barcode: GREEN, on_hand_qty: 12, available_qty: 10 },
      { barcode: BARLEY, on_hand_qty: 5 },
      { barcode: UNKNOWN, on_hand_qty: 1 },
    ],
  });
  checks.push(
    check('POST /api/ingest/inventory-snapshot', snapshot, 200, {
      lines_processed: 3,
      lines_upserted: 2,
      lines_unresolved: 1,
      logs_written: 2,
    }),
  );

  // Both levels reach 0 (Barley clamped from -3): two stock_zero events.
  const available = await post('/api/ingest/inventory-available', {
    shop,
    source_system: 'pos',
    mode: 'delta',
    idempotency_key: `${shop}-sale-1`,
    location: { identifier_type: 'pos_store_code', identifier_value: 'S001' },
    lines: [
      { barcode: GREEN, available_delta: -10 },
      { barcode: BARLEY, available_delta: -8 },
    ],
  });
  checks.push(
    check('POST /api/ingest/inventory-available (delta)', available, 200, { lines_updated: 2, lines_clamped: 1, lines_deduped: 0 }),
  );

  const restock = await post('/api/inventory-levels/bulk-upsert', {
    shop,
    source_system: 'oms',
    mode: 'absolute',
    lines: [{ barcode: GREEN, location_id: shibuya, available_qty: 6, on_hand_qty: 6 }],
  });
  checks.push(check('POST /api/inventory-levels/bulk-upsert (absolute)', restock, 200, { lines_updated: 1, stock_zero: length(0) }));

  const levels = await post('/api/inventory-levels/bulk-upsert', {
    shop,
    source_system: 'oms',
    mode: 'delta',
    idempotency_key: `${shop}-batch-1`,
    lines: [
      { barcode: GREEN, location_id: shibuya, available_qty_delta: -6, on_hand_delta: -6 },
      { barcode: BARLEY, location: { identifier_type: 'wms_code', identifier_value: 'WH-CHIBA' }, on_hand_delta: -2 },
    ],
  });
  checks.push(
    check('POST /api/inventory-levels/bulk-upsert (delta to zero)', levels, 200, {
      lines_updated: 2,
      lines_clamped: 1,
      stock_zero: (v) => Array.isArray(v) && v.length === 1 && v[0]?.barcode === GREEN && v[0]?.location_id === shibuya,
    }),
  );

  const row = (line: string, barcode: string, net: number) => ({
    source_system: 'pos',
    transaction_id: 'T-1002',
    transaction_line_id: line,
    line_instance_no: 1,
    barcode,
    ordered_at: '2026-11-21T10:15:00+09:00',
    currency: 'JPY',
    is_test: false,
    channel_id: channel,
    location_id: shibuya,
    gross_amount_taxincl: 165,
    discount_amount_taxincl: 0,
    net_amount_taxincl: net,
    net_amount_taxexcl: 150,
    tax_amount: 15,
    tax_rate: 0.1,
    refund_amount: 0,
  });
  const orders = await post('/api/order-line-master/bulk-upsert', {
    shop,
    change_source: 'image_test',
    rows: [row('1', GREEN, 165), row('2', UNKNOWN, 165), row('3', BARLEY, 99)],
  });
  checks.push(
    check('POST /api/order-line-master/bulk-upsert', orders, 200, {
      accepted_rows: 2,
      inserted_rows: 2,
      updated_rows: 0,
      rejected_rows: 1,
      warnings_count: 1,
    }),
  );

  // Three levels exist; the snapshot endpoint already wrote today's rows of the two in Shibuya.
  const today = businessDate(businessTimezone);
  const daily = await post('/api/admin/daily-snapshot', { shop, snapshot_date: today });
  checks.push(check('POST /api/admin/daily-snapshot', daily, 200, { shop, snapshot_date: today, rows_written: 1 }));
  const again = await post('/api/admin/daily-snapshot', { shop, snapshot_date: today });
  checks.push(check('POST /api/admin/daily-snapshot again', again, 200, { rows_written: 0, already_done: true }));

  return {
    checks,
    stockEvents: [
      { topic: 'stockZero', barcode: GREEN, locationId: shibuya, seq: 1 },
      { topic: 'stockZero', barcode: BARLEY, locationId: shibuya, seq: 1 },
      { topic: 'stockRestored', barcode: GREEN, locationId: shibuya, seq: 2 },
      { topic: 'stockZero', barcode: GREEN, locationId: shibuya, seq: 3 },
    ],
  };
}
