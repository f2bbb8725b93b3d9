import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { v7 as uuidv7 } from 'uuid';
import { SchemaRegistry } from '@ingest/contracts';
import { createDatabaseFromTemplate, createPool, dropDatabase } from '@ingest/db';
import { createCommandLog, createKafka, createMessageSink, ensureTopics, topicPlan } from '@ingest/kafka';
import { compareReadModels, replayCommandLog } from '@ingest/operator';

// D3 as a property: projecting the same random command log twice, into two empty databases,
// yields identical rows, ids included. The log mixes every kind of write over two shops.
const brokers = () => inject('kafkaBrokers');
const dropped: string[] = [];
afterAll(async () => {
  for (const name of dropped) await dropDatabase(inject('adminDatabaseUrl'), name);
});

const SHOPS = ['d3-a.example', 'd3-b.example'];
const LOC = (shop: string, i: number) => `0190${String(SHOPS.indexOf(shop)).padStart(4, '0')}-0000-7000-8000-00000000000${i}`;
const CH = (shop: string) => `0191${String(SHOPS.indexOf(shop)).padStart(4, '0')}-0000-7000-8000-000000000001`;
const barcode = fc.constantFrom('A', 'B', 'C', 'Z');
const qty = fc.integer({ min: 0, max: 5 });

type Op =
  | { t: 'products'; items: Array<{ barcode: string; price: number }> }
  | { t: 'snapshot'; loc: number; lines: Array<{ barcode: string; on_hand_qty: number }> }
  | { t: 'delta'; loc: number; key: string | null; lines: Array<{ barcode: string; available_delta: number }> }
  | { t: 'levels'; lines: Array<{ barcode: string; loc: number; available_qty: number }> }
  | { t: 'orders'; rows: Array<{ line: number; refund: number; barcode: string }> }
  | { t: 'daily'; date: string };

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({
    t: fc.constant('products' as const),
    items: fc.array(fc.record({ barcode, price: fc.constantFrom(100, 120) }), { minLength: 1, maxLength: 3 }),
  }),
  fc.record({
    t: fc.constant('snapshot' as const),
    loc: fc.constantFrom(1, 2),
    lines: fc.array(fc.record({ barcode, on_hand_qty: qty }), { minLength: 1, maxLength: 3 }),
  }),
  fc.record({
    t: fc.constant('delta' as const),
    loc: fc.constantFrom(1, 2),
    key: fc.option(fc.constantFrom('k1', 'k2'), { nil: null }),
    lines: fc.array(fc.record({ barcode, available_delta: fc.integer({ min: -4, max: 4 }) }), { minLength: 1, maxLength: 3 }),
  }),
  fc.record({
    t: fc.constant('levels' as const),
    lines: fc.array(fc.record({ barcode, loc: fc.constantFrom(1, 2), available_qty: qty }), { minLength: 1, maxLength: 3 }),
  }),
  fc.record({
    t: fc.constant('orders' as const),
    rows: fc.array(fc.record({ line: fc.constantFrom(1, 2), refund: fc.constantFrom(0, 50), barcode }), { minLength: 1, maxLength: 3 }),
  }),
  fc.record({ t: fc.constant('daily' as const), date: fc.constantFrom('2026-11-20', '2026-11-21') }),
);

let clock = Date.parse('2026-11-21T00:00:00Z');
function envelope(shop: string, kind: string, endpoint: string, payload: object, extra: object = {}) {
  const at = new Date((clock += 1000)).toISOString();
  return { command_id: uuidv7(), kind, shop, received_at: at, source: { endpoint }, ...extra, payload };
}
const inv = (shop: string, kind: string, endpoint: string, payload: object, key?: string | null) =>
  envelope(shop, kind, endpoint, payload, {
    source_system: 'pos',
    inventory_as_of: new Date(clock + 1000).toISOString(),
    ...(key ? { idempotency_key: key, payload_hash: JSON.stringify(payload) } : {}),
  });

function commandsOf(shop: string, ops: Op[]): object[] {
  const setup = [
    envelope(shop, 'locations.register', '/api/admin/locations', {
      locations: [1, 2].map((i) => ({
        location_id: LOC(shop, i),
        name: `L${i}`,
        identifiers: [{ identifier_type: 'pos', identifier_value: `S${i}` }],
      })),
    }),
    envelope(shop, 'channels.register', '/api/admin/channels', { channels: [{ channel_id: CH(shop), name: 'Web' }] }),
  ];
  return [
    ...setup,
    ...ops.map((o) => {
      switch (o.t) {
        case 'products':
          return envelope(shop, 'products.upsert', '/api/ingest/products', {
            response: 'ingest',
            items: o.items.map((i) => ({ product: { barcode: i.barcode, product_name: `P${i.barcode}`, current_price: i.price } })),
          });
        case 'snapshot':
          return inv(shop, 'inventory.snapshot', '/api/ingest/inventory-snapshot', {
            location: { location_id: LOC(shop, o.loc) },
            snapshot_date: '2026-11-21',
            lines: o.lines,
          });
        case 'delta':
          return inv(
            shop,
            'inventory.available',
            '/api/ingest/inventory-available',
            { mode: 'delta', location: { location: { identifier_type: 'pos', identifier_value: `S${o.loc}` } }, lines: o.lines },
            o.key,
          );
        case 'levels':
          return inv(shop, 'inventory.levels', '/api/inventory-levels/bulk-upsert', {
            mode: 'absolute',
            lines: o.lines.map((l) => ({
              barcode: l.barcode,
              location: { location_id: LOC(shop, l.loc) },
              set: { available_qty: l.available_qty },
            })),
          });
        case 'orders':
          return envelope(shop, 'order_lines.upsert', '/api/order-line-master/bulk-upsert', {
            rows: o.rows.map((r) => ({
              source_system: 'pos',
              transaction_id: 'T1',
              transaction_line_id: 'L1',
              line_instance_no: r.line,
              barcode: r.barcode,
              ordered_at: '2026-11-20T10:00:00+09:00',
              currency: 'JPY',
              is_test: false,
              channel_id: CH(shop),
              location_id: LOC(shop, 1),
              gross_amount_taxincl: 110,
              discount_amount_taxincl: 0,
              net_amount_taxincl: 110,
              net_amount_taxexcl: 100,
              tax_amount: 10,
              tax_rate: 0.1,
              refund_amount: r.refund,
            })),
            dry_run: false,
            change_source: 'external_app',
            ingest_run_id: null,
            idempotency_key: null,
            changed_by_user_id: null,
          });
        case 'daily':
          return envelope(shop, 'inventory.daily_snapshot', 'scheduler', { snapshot_date: o.date });
      }
    }),
  ];
}

async function project(topic: string): Promise<{ url: string; rows: number }> {
  const name = `ingest_test_d3_${randomUUID().slice(0, 8)}`;
  const url = await createDatabaseFromTemplate(inject('adminDatabaseUrl'), name, inject('templateDatabase'));
  dropped.push(name);
  const pool = createPool({ connectionString: url, max: 4 });
  try {
    const r = await replayCommandLog({
      pool,
      kafka: createKafka({ brokers: brokers(), clientId: `test-${name}` }),
      schemas: new SchemaRegistry(),
      topic,
      batchSize: 3,
    });
    expect(r.complete).toBe(true);
    return { url, rows: r.applied };
  } finally {
    await pool.end();
  }
}

describe('D3: projecting the same command log twice gives identical rows', () => {
  it('holds for random logs of every command kind over two shops', async () => {
    const sink = await createMessageSink(createKafka({ brokers: brokers(), clientId: 'test-d3' }));
    try {
      await fc.assert(
        fc.asyncProperty(
          fc.array(op, { minLength: 5, maxLength: 25 }),
          fc.array(op, { minLength: 5, maxLength: 25 }),
          async (opsA, opsB) => {
            const topic = `test.d3.${randomUUID().slice(0, 8)}`;
            await ensureTopics(createKafka({ brokers: brokers(), clientId: 'test-d3-admin' }), [
              topicPlan({ commands: topic, audit: `${topic}.a`, stockZero: `${topic}.z`, stockRestored: `${topic}.r` }, 3)[0]!,
            ]);
            const log = createCommandLog(sink, topic);
            const [a, b] = [commandsOf(SHOPS[0]!, opsA), commandsOf(SHOPS[1]!, opsB)];
            // Interleave the shops; each shop's own order is kept (D2).
            for (let i = 0; i < Math.max(a.length, b.length); i++) for (const c of [a[i], b[i]]) if (c) await log.appendCommand(c as never);
            const [first, second] = [await project(topic), await project(topic)];
            expect(first.rows).toBe(a.length + b.length);
            for (const t of await compareReadModels(first.url, second.url)) expect(t, t.table).toMatchObject({ identical: true });
          },
        ),
        { numRuns: 4 },
      );
    } finally {
      await sink.close();
    }
  });
});
