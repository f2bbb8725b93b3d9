import { expect } from 'vitest';
import { CRON_SECRET, INGEST_SECRET, post, type TestPipeline } from './pipeline.ts';

/**
 * Every kind of command for one shop through the live path (D26 tests): registry, products by both
 * secrets, all inventory modes with an idempotent resend, order lines with row errors, a refund,
 * a dry run and the daily snapshot. Each request must be answered 200.
 */
export async function mixedWorkload(p: TestPipeline, shop: string): Promise<void> {
  const h = { 'x-ingest-secret': INGEST_SECRET };
  const ok = async (path: string, body: unknown, headers: Record<string, string> = h) => {
    const r = await post(`${p.url()}${path}`, body, headers);
    expect(r.status, `${path}: ${r.text}`).toBe(200);
    return r.json;
  };
  const loc = (
    await ok('/api/admin/locations', {
      shop,
      locations: [{ name: 'Main', identifiers: [{ identifier_type: 'pos', identifier_value: `${shop}-1` }] }, { name: 'Back' }],
    })
  ).locations;
  const ch = (await ok('/api/admin/channels', { shop, channels: [{ name: 'Web' }] })).channels[0].channel_id;
  const [l1, l2] = [loc[0].location_id, loc[1].location_id];
  await ok(
    '/api/products/bulk-upsert',
    {
      products: [
        { barcode: 'A', product_name: 'Apple', current_price: 100 },
        { barcode: 'B', product_name: 'Bean' },
      ],
    },
    { 'x-cron-secret': CRON_SECRET, 'x-shop': shop },
  );
  await ok('/api/ingest/products', {
    shop,
    products: [
      { barcode: 'A', product_name: 'Apple', current_price: 120 },
      { barcode: 'C', product_name: 'Corn', is_active: false },
      { barcode: 'X' },
    ],
  });
  await ok('/api/ingest/inventory-snapshot', {
    shop,
    source_system: 'pos',
    location: { identifier_type: 'pos', identifier_value: `${shop}-1` },
    lines: [
      { barcode: 'A', on_hand_qty: 5 },
      { barcode: 'B', on_hand_qty: 2, available_qty: 1 },
      { barcode: 'ZZ', on_hand_qty: 1 },
    ],
  });
  await ok('/api/ingest/inventory-available', {
    shop,
    source_system: 'pos',
    mode: 'delta',
    location_id: l1,
    idempotency_key: 'k1',
    lines: [{ barcode: 'A', available_delta: -7 }],
  });
  await ok('/api/ingest/inventory-available', {
    shop,
    source_system: 'pos',
    mode: 'delta',
    location_id: l1,
    idempotency_key: 'k1',
    lines: [{ barcode: 'A', available_delta: -7 }],
  });
  await ok('/api/ingest/inventory-available', {
    shop,
    source_system: 'pos',
    mode: 'absolute',
    location_id: l1,
    lines: [{ barcode: 'B', available_qty: 4 }],
  });
  await ok('/api/inventory-levels/bulk-upsert', {
    shop,
    source_system: 'wms',
    mode: 'absolute',
    lines: [
      { barcode: 'A', location_id: l2, on_hand_qty: 3, available_qty: 3 },
      { barcode: 'C', location_id: l1, incoming_qty: 9 },
    ],
  });
  await ok('/api/inventory-levels/bulk-upsert', {
    shop,
    source_system: 'wms',
    mode: 'delta',
    idempotency_key: 'k2',
    lines: [
      { barcode: 'A', location_id: l2, available_delta: -3 },
      { barcode: 'A', location_id: l1, available_delta: 2 },
    ],
  });
  const row = {
    source_system: 'pos',
    transaction_id: 'T1',
    transaction_line_id: 'L1',
    line_instance_no: 1,
    barcode: 'A',
    ordered_at: '2026-11-20T10:00:00+09:00',
    currency: 'JPY',
    is_test: false,
    channel_id: ch,
    location_id: l1,
    gross_amount_taxincl: 110,
    discount_amount_taxincl: 0,
    net_amount_taxincl: 110,
    net_amount_taxexcl: 100,
    tax_amount: 10,
    tax_rate: 0.1,
    refund_amount: 0,
  };
  await ok('/api/order-line-master/bulk-upsert', {
    shop,
    rows: [row, { ...row, line_instance_no: 2, barcode: 'NOPE' }, { ...row, line_instance_no: 3, tax_rate: 2 }],
  });
  await ok('/api/order-line-master/bulk-upsert', {
    shop,
    rows: [{ ...row, refund_amount: 110, refunded_at: '2026-11-21T00:00:00Z' }],
    change_source: 'pos-sync',
    ingest_run_id: 'run-1',
  });
  await ok('/api/order-line-master/bulk-upsert', { shop, dry_run: true, rows: [{ ...row, transaction_id: 'T2' }] });
  await ok('/api/admin/daily-snapshot', { shop, snapshot_date: '2026-11-20' });
}
