import { randomUUID } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SchemaRegistry } from '@ingest/contracts';
import { createPool, type Pool } from '@ingest/db';
import { validOrderRow } from '@ingest/domain/testing';
import { createCommandLog, createKafka, createMessageSink, type MessageSink } from '@ingest/kafka';
import { createDryRunner } from '@ingest/projection';
import { CRON_SECRET, INGEST_SECRET, post, startPipeline, waitFor, type HttpResult, type TestPipeline } from '../support/pipeline.ts';
import { INVENTORY_ENV } from '../support/inventory.ts';

// Dry run (D22, D15b, D17, D18, D19, D14, D16) on every write endpoint, against a real state:
// the body is sent with ?dry_run=true, then the same body for real right after. The answers are equal
// but for dry_run / as_of, and the dry run changed nothing: every table of the data model and of the
// runtime (checksums), no outbox row, no record on the command topic.

let p: TestPipeline;
let admin: ReturnType<ReturnType<typeof createKafka>['admin']>;
beforeAll(async () => {
  p = await startPipeline({ env: INVENTORY_ENV });
  admin = createKafka({ brokers: p.brokers, clientId: `test-${p.id}-dry-admin` }).admin();
  await admin.connect();
});
afterAll(async () => {
  await admin?.disconnect();
  await p?.stop();
});

const ING = { 'x-ingest-secret': INGEST_SECRET };
const T_OLD = '2026-11-20T00:00:00Z';
const T_MID = '2026-11-21T00:00:00Z';
const T_NEW = '2026-11-22T00:00:00Z';

/** What a dry run must not touch: every table the projection or the gateway writes. */
const TABLES: Array<[string, string]> = [
  ['products', 'public.products'],
  ['product logs', 'public.product_update_logs'],
  ['locations', 'sot.locations'],
  ['location identifiers', 'sot.location_identifiers'],
  ['channels', 'sot.channels'],
  ['levels', 'sot.inventory_levels'],
  ['daily', 'sot.inventory_daily_snapshots'],
  ['inventory logs', 'sot.inventory_update_logs'],
  ['order lines', 'public.order_line_master'],
  ['order line logs', 'public.order_line_master_update_logs'],
  ['claims', 'agent_runtime.processed_commands'],
  ['requests', 'agent_runtime.command_requests'],
  ['results', 'agent_runtime.command_results'],
  // The relay stamps published_at on earlier rows meanwhile: the rows themselves are what counts.
  ['outbox', '(SELECT id, event_id, topic, message_key, payload, command_id, log_table FROM agent_runtime.outbox)'],
  ['idempotency keys', 'agent_runtime.idempotency_keys'],
  ['checkpoints', 'agent_runtime.projector_checkpoints'],
  ['daily runs', 'agent_runtime.daily_snapshot_runs'],
  ['parked', 'agent_runtime.parked_commands'],
];

async function fingerprint(): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const [name, from] of TABLES) {
    const { rows } = await p.db.query<{ n: number; sum: string | null }>(
      `SELECT count(*)::int AS n, md5(string_agg(t::text, '|' ORDER BY t::text)) AS sum FROM ${from} t`,
    );
    out[name] = `${rows[0]?.n}:${rows[0]?.sum ?? ''}`;
  }
  const ends = await admin.fetchTopicOffsets(p.topics.commands);
  out['command topic'] = ends.map((e) => `${e.partition}:${e.high}`).join(',');
  return out;
}

interface Shop {
  shop: string;
  l1: string;
  l2: string;
  ch: string;
  ident: { identifier_type: string; identifier_value: string };
}

const ok = async (path: string, body: unknown, headers: Record<string, string> = ING): Promise<HttpResult> => {
  const r = await post(`${p.url()}${path}`, body, headers);
  expect(r.status, `${path}: ${r.text.slice(0, 500)}`).toBe(200);
  return r;
};

/**
 * A shop with a real state to decide against: two locations, a channel, products A B C, levels of
 * different ages (A@L1 and B@L1 from a snapshot at T_OLD, then B@L1 and A@L2 set at T_NEW) and an order line.
 */
async function newShop(what: string): Promise<Shop> {
  const shop = `dry-${what}-${randomUUID().slice(0, 8)}.example`;
  const s: Shop = {
    shop,
    l1: randomUUID(),
    l2: randomUUID(),
    ch: randomUUID(),
    ident: { identifier_type: 'pos', identifier_value: `S1-${shop}` },
  };
  await ok('/api/admin/locations', {
    shop,
    locations: [
      { location_id: s.l1, name: 'Store', identifiers: [s.ident] },
      { location_id: s.l2, name: 'Warehouse' },
    ],
  });
  await ok('/api/admin/channels', { shop, channels: [{ channel_id: s.ch, name: 'Web' }] });
  await ok('/api/ingest/products', {
    shop,
    products: [
      { barcode: 'A', product_name: 'Apple', current_price: 100 },
      { barcode: 'B', product_name: 'Bean', current_price: 200 },
      { barcode: 'C', product_name: 'Corn' },
    ],
  });
  await ok('/api/ingest/inventory-snapshot', {
    shop,
    source_system: 'pos',
    location_id: s.l1,
    inventory_as_of: T_OLD,
    lines: [
      { barcode: 'A', on_hand_qty: 5 },
      { barcode: 'B', on_hand_qty: 2, available_qty: 1 },
    ],
  });
  await ok('/api/inventory-levels/bulk-upsert', {
    shop,
    source_system: 'wms',
    mode: 'absolute',
    inventory_as_of: T_NEW,
    lines: [
      { barcode: 'A', location_id: s.l2, on_hand_qty: 3, available_qty: 3 },
      { barcode: 'B', location_id: s.l1, incoming_qty: 4 },
    ],
  });
  await ok('/api/order-line-master/bulk-upsert', { shop, rows: [orderRow(s)] });
  return s;
}

const orderRow = (s: Shop, over: Record<string, unknown> = {}) =>
  validOrderRow({ barcode: 'A', channel_id: s.ch, location_id: s.l1 }, over);

/**
 * The dry-run check: dry run, nothing changed, then the same body for real; the answers are the
 * same but for dry_run / as_of. Returns the real answer for the case's own assertions.
 */
async function dryThenReal(
  path: string,
  body: unknown,
  headers: Record<string, string> = ING,
): Promise<{ dry: HttpResult; real: HttpResult }> {
  const before = await fingerprint();
  const sentAt = Date.now();
  const dry = await post(`${p.url()}${path}?dry_run=true`, body, headers);
  const answeredAt = Date.now();
  expect(dry.json?.dry_run, dry.text.slice(0, 500)).toBe(true);
  expect(Date.parse(dry.json.as_of)).toBeGreaterThanOrEqual(sentAt - 1000);
  expect(Date.parse(dry.json.as_of)).toBeLessThanOrEqual(answeredAt + 1000);
  expect(await fingerprint()).toEqual(before);

  const real = await post(`${p.url()}${path}`, body, headers);
  const { dry_run: _dry, as_of: _asOf, ...dryBody } = dry.json as Record<string, unknown>;
  // Order lines echo the flag in every answer (spec endpoint 6); the others have it on dry runs only.
  const expected = 'dry_run' in (real.json as object) ? { ...dryBody, dry_run: false } : dryBody;
  expect([real.status, real.json]).toEqual([dry.status, expected]);
  // Key order too: the real answer's fields, then as_of.
  expect(Object.keys(dry.json as object)).toEqual([
    ...Object.keys(real.json as object),
    ...('dry_run' in (real.json as object) ? [] : ['dry_run']),
    'as_of',
  ]);
  return { dry, real };
}

describe('dry run on every write endpoint (D22)', () => {
  it('products bulk-upsert (endpoint 1): created, updated, unchanged and a bad item as the real run', async () => {
    const s = await newShop('bulk');
    const { real } = await dryThenReal(
      '/api/products/bulk-upsert',
      {
        products: [
          { barcode: 'A', product_name: 'Apple', current_price: 120 },
          { barcode: 'B', product_name: 'Bean', current_price: 200 },
          { barcode: 'D', product_name: 'Date' },
          { product_name: 'no barcode' },
        ],
      },
      { 'x-cron-secret': CRON_SECRET, 'x-shop': s.shop },
    );
    expect(real.json).toMatchObject({ created: 1, updated: 1, unchanged: 1 });
  });

  it('products ingest (endpoint 2): a deactivation and a repeated barcode (D6a) as the real run', async () => {
    const s = await newShop('ingest');
    const { real } = await dryThenReal('/api/ingest/products', {
      shop: s.shop,
      products: [
        { barcode: 'C', product_name: 'Corn', is_active: false },
        { barcode: 'E', product_name: 'Egg' },
        { barcode: 'E', product_name: 'Eggs' },
      ],
    });
    expect(real.json).toMatchObject({ ok: true, created: 1, updated: 2, unchanged: 0, errors_count: 0 });
  });

  it('inventory snapshot (endpoint 4): resolution by identifier, a stale line (D15b), an unknown barcode', async () => {
    const s = await newShop('snap');
    const { real } = await dryThenReal('/api/ingest/inventory-snapshot', {
      shop: s.shop,
      source_system: 'pos',
      location: s.ident,
      inventory_as_of: T_MID,
      lines: [
        { barcode: 'A', on_hand_qty: 4 },
        { barcode: 'B', on_hand_qty: 9 },
        { barcode: 'ZZ', on_hand_qty: 1 },
      ],
    });
    expect(real.json).toMatchObject({ location_id: s.l1, lines_upserted: 1, logs_written: 1, lines_unresolved: 1, lines_stale: 1 });
  });

  it('inventory snapshot: an unresolved location is the same 422 (D14)', async () => {
    const s = await newShop('snap422');
    const { real } = await dryThenReal('/api/ingest/inventory-snapshot', {
      shop: s.shop,
      source_system: 'pos',
      location: { identifier_type: 'pos', identifier_value: 'nowhere' },
      lines: [{ barcode: 'A', on_hand_qty: 4 }],
    });
    expect(real.status).toBe(422);
    expect(real.json.error_kind).toBe('location_unresolved');
  });

  it('inventory available absolute (endpoint 5): a move to 0 and an unchanged line', async () => {
    const s = await newShop('avail');
    const { real } = await dryThenReal('/api/ingest/inventory-available', {
      shop: s.shop,
      source_system: 'pos',
      mode: 'absolute',
      location_id: s.l1,
      lines: [
        { barcode: 'A', available_qty: 0 },
        { barcode: 'B', available_qty: 1 },
        { barcode: 'ZZ', available_qty: 1 },
      ],
    });
    expect(real.json).toMatchObject({ lines_updated: 1, lines_unchanged: 1, lines_unresolved: 1 });
  });

  it('inventory available delta: a clamp, and its idempotency_key is not spent by the dry run (D19)', async () => {
    const s = await newShop('delta');
    const { real } = await dryThenReal('/api/ingest/inventory-available', {
      shop: s.shop,
      source_system: 'pos',
      mode: 'delta',
      location_id: s.l1,
      idempotency_key: 'k-dry',
      lines: [
        { barcode: 'A', available_delta: -9 },
        { barcode: 'B', available_delta: 1 },
      ],
    });
    expect(real.json).toMatchObject({
      lines_updated: 2,
      lines_clamped: 1,
      lines_deduped: 0,
      clamped: [{ barcode: 'A', computed: -4, set: 0 }],
    });
  });

  it('inventory levels absolute (endpoint 3): stock_zero (D18) and a stale line (D15b)', async () => {
    const s = await newShop('levels');
    const { real } = await dryThenReal('/api/inventory-levels/bulk-upsert', {
      shop: s.shop,
      source_system: 'wms',
      mode: 'absolute',
      inventory_as_of: T_MID,
      lines: [
        { barcode: 'A', location_id: s.l1, available_qty: 0 },
        { barcode: 'B', location_id: s.l1, on_hand_qty: 7 },
      ],
    });
    expect(real.json).toMatchObject({ lines_updated: 1, lines_stale: 1, stock_zero: [{ barcode: 'A', location_id: s.l1 }] });
  });

  it('inventory levels delta: a clamp, a new level and stock_zero', async () => {
    const s = await newShop('ldelta');
    const { real } = await dryThenReal('/api/inventory-levels/bulk-upsert', {
      shop: s.shop,
      source_system: 'wms',
      mode: 'delta',
      idempotency_key: 'k-levels',
      lines: [
        { barcode: 'A', location_id: s.l2, available_delta: -10 },
        { barcode: 'C', location: s.ident, incoming_delta: 2 },
      ],
    });
    expect(real.json).toMatchObject({ lines_updated: 2, lines_clamped: 1, stock_zero: [{ barcode: 'A', location_id: s.l2 }] });
  });

  it('order lines (endpoint 6) with ?dry_run=true: an update, an insert, a registry rejection and a warning (D20, D21)', async () => {
    const s = await newShop('orders');
    const { real } = await dryThenReal('/api/order-line-master/bulk-upsert', {
      shop: s.shop,
      rows: [
        orderRow(s, { customer_id: 'C-2' }),
        orderRow(s, { line_instance_no: 2 }),
        orderRow(s, { line_instance_no: 3, channel_id: randomUUID() }),
        orderRow(s, { line_instance_no: 4, barcode: 'NOT-IN-MASTER' }),
      ],
    });
    expect(real.json).toMatchObject({
      dry_run: false,
      accepted_rows: 3,
      inserted_rows: 2,
      updated_rows: 1,
      rejected_rows: 1,
      warnings_count: 1,
    });
  });

  it('admin locations (D14): a rename with new identifiers and a new location', async () => {
    const s = await newShop('loc');
    const popup = randomUUID();
    const { real } = await dryThenReal('/api/admin/locations', {
      shop: s.shop,
      locations: [
        { location_id: s.l2, name: 'Warehouse 2', identifiers: [{ identifier_type: 'wms', identifier_value: 'W9' }] },
        { location_id: popup, name: 'Popup' },
      ],
    });
    expect(real.json.locations.map((l: { location_id: string }) => l.location_id)).toEqual([s.l2, popup]);
  });

  it('admin locations: a location_id of another shop is the same 422', async () => {
    const other = await newShop('loc-other');
    const s = await newShop('loc-mine');
    const { real } = await dryThenReal('/api/admin/locations', { shop: s.shop, locations: [{ location_id: other.l1, name: 'Mine now' }] });
    expect(real.status).toBe(422);
  });

  it('admin channels (D14): a rename and a new channel', async () => {
    const s = await newShop('ch');
    const { real } = await dryThenReal('/api/admin/channels', {
      shop: s.shop,
      channels: [
        { channel_id: s.ch, name: 'Web shop' },
        { channel_id: randomUUID(), name: 'POS' },
      ],
    });
    expect(real.json.channels).toHaveLength(2);
  });

  it('admin daily snapshot (D16): the rows a day would copy, and already_done after the real one', async () => {
    const s = await newShop('daily');
    const { real } = await dryThenReal('/api/admin/daily-snapshot', { shop: s.shop, snapshot_date: '2026-11-19' });
    expect(real.json).toMatchObject({ rows_written: 3 });
    const { real: again } = await dryThenReal('/api/admin/daily-snapshot', { shop: s.shop, snapshot_date: '2026-11-19' });
    expect(again.json).toMatchObject({ rows_written: 0, already_done: true });
  });
});

describe('the dry runner (projector port)', () => {
  let pool: Pool;
  let sink: MessageSink;
  beforeAll(async () => {
    pool = createPool({ connectionString: p.databaseUrl, role: 'ingest_service', max: 2, applicationName: 'test-dry-runner' });
    sink = await createMessageSink(createKafka({ brokers: p.brokers, clientId: `test-${p.id}-dry-sink` }));
  });
  afterAll(async () => {
    await sink?.close();
    await pool?.end();
  });

  it('its events are the outbox rows the live projector writes for the same command message (D5, D18)', async () => {
    const s = await newShop('events');
    const command = {
      command_id: uuidv7(),
      kind: 'inventory.levels' as const,
      shop: s.shop,
      received_at: new Date().toISOString(),
      source: { endpoint: '/api/inventory-levels/bulk-upsert' },
      source_system: 'wms',
      inventory_as_of: new Date().toISOString(),
      payload: {
        mode: 'absolute',
        lines: [
          { barcode: 'A', location: { location_id: s.l1 }, set: { available_qty: 0 } },
          { barcode: 'B', location: { location_id: s.l1 }, set: { on_hand_qty: 8 } },
        ],
      },
    };
    const runner = createDryRunner({ pool, schemas: new SchemaRegistry(), statementTimeoutMs: 10_000 });
    const before = await fingerprint();
    const dry = await runner.run(JSON.stringify(command));
    expect(await fingerprint()).toEqual(before);
    if (dry.outcome !== 'projected') throw new Error(`not projected: ${JSON.stringify(dry)}`);
    expect(dry.events.map((e) => e.channel).sort()).toEqual(['audit', 'stock_zero']);

    await createCommandLog(sink, p.topics.commands).appendCommand(command);
    const stored = await waitFor(async () => {
      const { rows } = await p.db.query('SELECT status_code, body FROM agent_runtime.command_results WHERE command_id = $1', [
        command.command_id,
      ]);
      return rows[0] as { status_code: number; body: unknown } | undefined;
    });
    expect({ status: stored.status_code, body: stored.body }).toEqual(dry.reply);
    const { rows: outbox } = await p.db.query<{
      event_id: string;
      topic: string;
      message_key: string;
      headers: unknown;
      payload: unknown;
      log_table: string | null;
    }>(
      'SELECT event_id, topic, message_key, headers, payload, log_table FROM agent_runtime.outbox WHERE command_id = $1 ORDER BY event_id',
      [command.command_id],
    );
    const topicOf = { audit: p.topics.audit, stock_zero: p.topics.stockZero, stock_restored: p.topics.stockRestored };
    expect(outbox).toEqual(
      [...dry.events]
        .sort((a, b) => a.event_id.localeCompare(b.event_id))
        .map((e) => ({
          event_id: e.event_id,
          topic: topicOf[e.channel],
          message_key: e.key,
          headers: e.headers,
          payload: e.payload,
          log_table: e.log_table ?? null,
        })),
    );
  });

  it('a shop with a parked command: the dry run says the command would be parked behind it', async () => {
    const s = await newShop('parked');
    const blocker = uuidv7();
    await p.db.query(
      `INSERT INTO agent_runtime.parked_commands (command_id, shop, kind, kafka_topic, kafka_partition, kafka_offset, message, error, attempts)
       VALUES ($1, $2, 'products.upsert', 'nowhere', 0, 0, '\\x', 'test', 1)`,
      [blocker, s.shop],
    );
    const r = await post(
      `${p.url()}/api/ingest/products?dry_run=true`,
      { shop: s.shop, products: [{ barcode: 'A', product_name: 'Apple' }] },
      ING,
    );
    expect([r.status, r.json.status, r.json.waiting_behind, r.json.dry_run]).toEqual([202, 'parked', blocker, true]);
    await p.db.query('DELETE FROM agent_runtime.parked_commands WHERE command_id = $1', [blocker]);
  });
});
