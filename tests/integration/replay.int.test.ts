import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { SchemaRegistry } from '@ingest/contracts';
import { createDatabaseFromTemplate, createPool, dropDatabase, type Pool } from '@ingest/db';
import { createKafka } from '@ingest/kafka';
import { compareReadModels, replayCommandLog } from '@ingest/projector';
import { CRON_SECRET, INGEST_SECRET, post, startPipeline, type TestPipeline } from '../support/pipeline.ts';

// D26 / D3: a rebuild from offset 0 of the command log into an empty database reproduces the
// live read model exactly, publishes nothing, and survives being stopped half way.
let p: TestPipeline;
const scratch: Array<{ name: string; url: string; pool: Pool }> = [];
const h = { 'x-ingest-secret': INGEST_SECRET };

async function scratchDb(): Promise<{ url: string; pool: Pool }> {
  const name = `ingest_test_replay_${randomUUID().slice(0, 8)}`;
  const url = await createDatabaseFromTemplate(inject('adminDatabaseUrl'), name, inject('templateDatabase'));
  const s = { name, url, pool: createPool({ connectionString: url, max: 4 }) };
  scratch.push(s);
  return s;
}

async function mixedWorkload(shop: string): Promise<void> {
  const ok = async (path: string, body: unknown, headers: Record<string, string> = h) => {
    const r = await post(`${p.url()}${path}`, body, headers);
    expect(r.status, `${path}: ${r.text}`).toBe(200);
    return r.json;
  };
  const loc = (await ok('/api/admin/locations', { shop, locations: [{ name: 'Main', identifiers: [{ identifier_type: 'pos', identifier_value: `${shop}-1` }] }, { name: 'Back' }] })).locations;
  const ch = (await ok('/api/admin/channels', { shop, channels: [{ name: 'Web' }] })).channels[0].channel_id;
  const [l1, l2] = [loc[0].location_id, loc[1].location_id];
  await ok('/api/products/bulk-upsert', { products: [{ barcode: 'A', product_name: 'Apple', current_price: 100 }, { barcode: 'B', product_name: 'Bean' }] }, { 'x-cron-secret': CRON_SECRET, 'x-shop': shop });
  await ok('/api/ingest/products', { shop, products: [{ barcode: 'A', product_name: 'Apple', current_price: 120 }, { barcode: 'C', product_name: 'Corn', is_active: false }, { barcode: 'X' }] });
  await ok('/api/ingest/inventory-snapshot', { shop, source_system: 'pos', location: { identifier_type: 'pos', identifier_value: `${shop}-1` }, lines: [{ barcode: 'A', on_hand_qty: 5 }, { barcode: 'B', on_hand_qty: 2, available_qty: 1 }, { barcode: 'ZZ', on_hand_qty: 1 }] });
  await ok('/api/ingest/inventory-available', { shop, source_system: 'pos', mode: 'delta', location_id: l1, idempotency_key: 'k1', lines: [{ barcode: 'A', available_delta: -7 }] });
  await ok('/api/ingest/inventory-available', { shop, source_system: 'pos', mode: 'delta', location_id: l1, idempotency_key: 'k1', lines: [{ barcode: 'A', available_delta: -7 }] });
  await ok('/api/ingest/inventory-available', { shop, source_system: 'pos', mode: 'absolute', location_id: l1, lines: [{ barcode: 'B', available_qty: 4 }] });
  await ok('/api/inventory-levels/bulk-upsert', { shop, source_system: 'wms', mode: 'absolute', lines: [{ barcode: 'A', location_id: l2, on_hand_qty: 3, available_qty: 3 }, { barcode: 'C', location_id: l1, incoming_qty: 9 }] });
  await ok('/api/inventory-levels/bulk-upsert', { shop, source_system: 'wms', mode: 'delta', idempotency_key: 'k2', lines: [{ barcode: 'A', location_id: l2, available_delta: -3 }, { barcode: 'A', location_id: l1, available_delta: 2 }] });
  const row = { source_system: 'pos', transaction_id: 'T1', transaction_line_id: 'L1', line_instance_no: 1, barcode: 'A', ordered_at: '2026-11-20T10:00:00+09:00', currency: 'JPY', is_test: false, channel_id: ch, location_id: l1, gross_amount_taxincl: 110, discount_amount_taxincl: 0, net_amount_taxincl: 110, net_amount_taxexcl: 100, tax_amount: 10, tax_rate: 0.1, refund_amount: 0 };
  await ok('/api/order-line-master/bulk-upsert', { shop, rows: [row, { ...row, line_instance_no: 2, barcode: 'NOPE' }, { ...row, line_instance_no: 3, tax_rate: 2 }] });
  await ok('/api/order-line-master/bulk-upsert', { shop, rows: [{ ...row, refund_amount: 110, refunded_at: '2026-11-21T00:00:00Z' }], change_source: 'pos-sync', ingest_run_id: 'run-1' });
  await ok('/api/order-line-master/bulk-upsert', { shop, dry_run: true, rows: [{ ...row, transaction_id: 'T2' }] });
  await ok('/api/admin/daily-snapshot', { shop, snapshot_date: '2026-11-20' });
}

beforeAll(async () => {
  p = await startPipeline({ env: { DAILY_SNAPSHOT_CHECK_MS: '3600000' } });
  for (const shop of ['replay-a.example', 'replay-b.example', 'replay-c.example']) await mixedWorkload(shop);
  await p.stopProjector(); // the live read model is final; the relay has published what it will
});
afterAll(async () => {
  for (const s of scratch) {
    await s.pool.end();
    await dropDatabase(inject('adminDatabaseUrl'), s.name);
  }
  await p?.stop();
});

const replay = (pool: Pool, extra: Partial<Parameters<typeof replayCommandLog>[0]> = {}) =>
  replayCommandLog({ pool, kafka: createKafka({ brokers: p.brokers, clientId: `test-${p.id}-replay` }), schemas: new SchemaRegistry(), topic: p.topics.commands, ...extra });

describe('replay into a scratch database (D26)', () => {
  it('reproduces every table of the live read model exactly, ids included (D3)', async () => {
    const s = await scratchDb();
    const result = await replay(s.pool, { batchSize: 7 });
    expect(result.complete).toBe(true);
    expect(result.applied).toBeGreaterThan(30);
    const tables = await compareReadModels(p.databaseUrl, s.url);
    for (const t of tables) expect(t, t.table).toMatchObject({ identical: true, onlyLive: [], onlyScratch: [], different: [] });
    const rows = Object.fromEntries(tables.map((t) => [t.table, t.liveRows]));
    for (const table of ['public.products', 'sot.inventory_levels', 'sot.inventory_update_logs', 'public.order_line_master', 'public.order_line_master_update_logs', 'sot.inventory_daily_snapshots'])
      expect(rows[table], table).toBeGreaterThan(0);
  });

  it('publishes nothing and stores no replies: no outbox rows, no command results in the rebuild', async () => {
    const s = await scratchDb();
    const liveOutbox = (await p.db.query('SELECT count(*)::int AS n FROM agent_runtime.outbox')).rows[0].n;
    await replay(s.pool);
    const { rows } = await s.pool.query(
      'SELECT (SELECT count(*)::int FROM agent_runtime.outbox) AS outbox, (SELECT count(*)::int FROM agent_runtime.command_results) AS results',
    );
    expect(rows[0]).toEqual({ outbox: 0, results: 0 });
    expect((await p.db.query('SELECT count(*)::int AS n FROM agent_runtime.outbox')).rows[0].n).toBe(liveOutbox);
  });

  it('stopped half way and resumed, it still verifies identical, applying each command once', async () => {
    const s = await scratchDb();
    const stop = new AbortController();
    const first = await replay(s.pool, {
      batchSize: 2,
      progressEveryMs: 1,
      onProgress: (pr) => {
        if (pr.done >= pr.total / 2) stop.abort();
      },
      signal: stop.signal,
    });
    expect(first.complete).toBe(false);
    const second = await replay(s.pool, { batchSize: 2 });
    expect(second.complete).toBe(true);
    const total = (await p.db.query('SELECT count(*)::int AS n FROM agent_runtime.processed_commands')).rows[0].n;
    expect(first.applied + first.skipped + second.applied + second.skipped).toBe(total);
    for (const t of await compareReadModels(p.databaseUrl, s.url)) expect(t, t.table).toMatchObject({ identical: true });
  });

  it('verify lists the rows that differ', async () => {
    const s = await scratchDb();
    await replay(s.pool);
    await s.pool.query(`UPDATE public.products SET product_name = 'tampered' WHERE barcode = 'A' AND shop = 'replay-a.example'`);
    await s.pool.query(`DELETE FROM sot.channels WHERE shop = 'replay-b.example'`);
    const tables = await compareReadModels(p.databaseUrl, s.url);
    const products = tables.find((t) => t.table === 'public.products')!;
    expect(products.identical).toBe(false);
    expect(products.different).toHaveLength(1);
    expect(tables.find((t) => t.table === 'sot.channels')!.onlyLive).toHaveLength(1);
  });
});
