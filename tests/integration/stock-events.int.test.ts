import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { v7 as uuidv7 } from 'uuid';
import { SCHEMAS_DIR, SchemaRegistry } from '@ingest/contracts';
import { productId } from '@ingest/domain';
import { createCommandLog, createKafka, createMessageSink, type MessageSink } from '@ingest/kafka';
import { expectServedCloudEvent, TEST_PUBLIC_BASE_URL } from '../support/cloudEvents.ts';
import { startPipeline, waitFor, type TestPipeline } from '../support/pipeline.ts';
import {
  INVENTORY_ENV,
  available,
  collectTopics,
  inventoryLogs,
  lastCommandId,
  levels,
  newLocation,
  newProducts,
  snapshot,
  uniqueShop,
  type SeenMessage,
  type TopicCollector,
} from '../support/inventory.ts';

// D18: stock_zero / stock_restored, read back with a real kafkajs consumer from the pipeline's own
// topics. Emitted by endpoints 3, 4 and 5 when available_qty moves >0 -> 0 (or 0 -> >0); a level
// created by a write emits nothing; CloudEvents binary headers; key = shop; per-level seq; one
// event per command even when the command is delivered twice (D4, D5).
let p: TestPipeline;
let events: TopicCollector;
let sink: MessageSink;
const schemas = new SchemaRegistry();
const validate = schemas.validator<Record<string, unknown>>('events/stock-level-event.json');
const schemaFile = JSON.parse(readFileSync(join(SCHEMAS_DIR, 'events/stock-level-event.json'), 'utf8')) as {
  required: string[];
  properties: object;
};

beforeAll(async () => {
  p = await startPipeline({ env: { ...INVENTORY_ENV, PUBLIC_BASE_URL: TEST_PUBLIC_BASE_URL } });
  events = await collectTopics(p, [p.topics.stockZero, p.topics.stockRestored]);
  sink = await createMessageSink(createKafka({ brokers: p.brokers, clientId: `test-${p.id}-raw` }));
});
afterAll(async () => {
  await events?.stop();
  await sink?.close();
  await p?.stop();
});

async function setup(what: string, barcodes: string[] = ['A', 'B', 'C']): Promise<{ shop: string; loc: string }> {
  const shop = uniqueShop(what);
  const loc = await newLocation(p, shop, 'Store');
  await newProducts(p, shop, barcodes);
  return { shop, loc };
}

const forLevel = (shop: string, barcode: string, loc: string) => (m: SeenMessage) =>
  m.value.shop === shop && m.value.barcode === barcode && m.value.location_id === loc;
const ofCommand = (commandId: string) => (m: SeenMessage) => m.value.command_id === commandId;

/**
 * Waits until every earlier stock event of the shop has been consumed: a fresh sentinel product
 * goes 1 -> 0 -> 1, written after everything else. The relay publishes the outbox in order and
 * one shop's events share a key (one partition per topic), so once both sentinel events are seen,
 * every earlier event of the shop on either topic has been seen too.
 */
let sentinels = 0;
async function sentinel(shop: string, loc: string): Promise<void> {
  const barcode = `SENTINEL-${++sentinels}`;
  await newProducts(p, shop, [barcode]);
  for (const available_qty of [1, 0, 1]) {
    const r = await available(p, {
      shop,
      source_system: 'sentinel',
      mode: 'absolute',
      location_id: loc,
      lines: [{ barcode, available_qty }],
    });
    expect(r.status, r.text).toBe(200);
  }
  await events.waitFor((m) => m.topic === p.topics.stockZero && forLevel(shop, barcode, loc)(m), `sentinel stock_zero of ${shop}`);
  await events.waitFor((m) => m.topic === p.topics.stockRestored && forLevel(shop, barcode, loc)(m), `sentinel stock_restored of ${shop}`);
}

const isSentinel = (m: SeenMessage): boolean => String(m.value.barcode).startsWith('SENTINEL-');

/** The distinct events (by event_id) matching pred, in seq order: the two topics interleave in any order. */
function distinctBySeq(pred: (m: SeenMessage) => boolean): SeenMessage[] {
  return [...new Map(events.messages.filter(pred).map((m) => [m.value.event_id, m])).values()].sort((a, b) => a.value.seq - b.value.seq);
}

/**
 * Checks one stock event against its schema, the spec's fields and the CloudEvents binding; and, as
 * a consumer would, reads it with the CloudEvents SDK and validates its data against the schema its
 * `dataschema` names, fetched from the gateway.
 */
async function expectWellFormed(m: SeenMessage, kind: 'stock_zero' | 'stock_restored', shop: string): Promise<void> {
  const event = await expectServedCloudEvent(p.url(), m);
  expect(event.dataschema).toBe(`${TEST_PUBLIC_BASE_URL}/schemas/events/stock-level-event.json`);
  expect([event.id, event.type, event.partitionkey]).toEqual([m.value.event_id, `com.retail-ingestion.inventory.${kind}.v1`, shop]);
  const v = validate(structuredClone(m.value));
  expect(v.ok, JSON.stringify(v.ok ? null : v.failure)).toBe(true);
  // Every field of the schema, and no other (the validator strips extras, so compare keys too).
  expect(Object.keys(m.value).sort()).toEqual([...schemaFile.required].sort());
  expect(Object.keys(schemaFile.properties).sort()).toEqual([...schemaFile.required].sort());
  expect(m.topic).toBe(kind === 'stock_zero' ? p.topics.stockZero : p.topics.stockRestored);
  expect(m.value.event_type).toBe(kind);
  expect(m.value.schema_version).toBe(1);
  expect(m.key).toBe(shop);
  expect(m.value.product_id).toBe(productId(shop, m.value.barcode));
  expect(m.headers['ce_id']).toBe(m.value.event_id);
  expect(m.headers['ce_specversion']).toBe('1.0');
  expect(m.headers['ce_type']).toEqual(expect.stringContaining(kind));
  expect(m.headers['ce_source']).toEqual(expect.any(String));
  expect(m.headers['ce_source']!.length).toBeGreaterThan(0);
  expect(Date.parse(m.headers['ce_time']!)).toBe(Date.parse(m.value.occurred_at));
}

/** The change_type of the log the same command wrote for the same level. */
async function logChangeType(shop: string, m: SeenMessage): Promise<string> {
  const logs = await inventoryLogs(p, shop, { barcode: m.value.barcode, location_id: m.value.location_id, command_id: m.value.command_id });
  expect(logs).toHaveLength(1);
  return logs[0]!.change_type;
}

describe('stock_zero and stock_restored from each endpoint', () => {
  it('endpoint 3 (levels): >0 -> 0 emits one stock_zero, 0 -> >0 emits stock_restored, with every field of the schema', async () => {
    const { shop, loc } = await setup('ep3');
    const t0 = '2026-11-21T01:00:00.000Z';
    const t1 = '2026-11-21T01:05:00.000Z';
    const t2 = '2026-11-21T01:10:00.000Z';
    await levels(p, {
      shop,
      source_system: 'wms',
      mode: 'absolute',
      inventory_as_of: t0,
      lines: [{ barcode: 'A', location_id: loc, on_hand_qty: 6, available_qty: 5 }],
    });
    const z = await levels(p, {
      shop,
      source_system: 'wms',
      mode: 'delta',
      inventory_as_of: t1,
      lines: [{ barcode: 'A', location_id: loc, available_delta: -5 }],
    });
    expect(z.json.stock_zero).toEqual([{ barcode: 'A', location_id: loc }]);
    const zeroCommand = await lastCommandId(p, shop, 'inventory.levels');
    const zero = await events.waitFor((m) => m.topic === p.topics.stockZero && forLevel(shop, 'A', loc)(m), 'stock_zero of endpoint 3');
    await expectWellFormed(zero, 'stock_zero', shop);
    expect(zero.value).toMatchObject({
      shop,
      barcode: 'A',
      location_id: loc,
      previous_available_qty: 5,
      available_qty: 0,
      on_hand_qty: 6,
      change_type: 'levels_delta',
      source_system: 'wms',
      command_id: zeroCommand,
      seq: 1,
    });
    expect(Date.parse(zero.value.occurred_at)).toBe(Date.parse(t1));
    expect(zero.value.change_type).toBe(await logChangeType(shop, zero));

    await levels(p, {
      shop,
      source_system: 'wms',
      mode: 'absolute',
      inventory_as_of: t2,
      lines: [{ barcode: 'A', location_id: loc, available_qty: 2 }],
    });
    const back = await events.waitFor(
      (m) => m.topic === p.topics.stockRestored && forLevel(shop, 'A', loc)(m),
      'stock_restored of endpoint 3',
    );
    await expectWellFormed(back, 'stock_restored', shop);
    expect(back.value).toMatchObject({ previous_available_qty: 0, available_qty: 2, on_hand_qty: 6, change_type: 'levels_set', seq: 2 });
    expect(Date.parse(back.value.occurred_at)).toBe(Date.parse(t2));
    expect(back.value.change_type).toBe(await logChangeType(shop, back));

    await sentinel(shop, loc);
    const mine = events.messages.filter(forLevel(shop, 'A', loc));
    expect(new Set(mine.map((m) => m.value.event_id)).size).toBe(2);
    expect(mine.filter((m) => m.value.command_id === zeroCommand).map((m) => m.value.event_type)).toEqual(['stock_zero']);
  });

  it('endpoint 4 (snapshot): >0 -> 0 emits stock_zero with change_type snapshot; back above 0 emits stock_restored', async () => {
    const { shop, loc } = await setup('ep4');
    const snap = (on_hand_qty: number, asOf: string, extra: Record<string, number> = {}) =>
      snapshot(p, {
        shop,
        source_system: 'pos',
        location_id: loc,
        inventory_as_of: asOf,
        lines: [{ barcode: 'B', on_hand_qty, ...extra }],
      });
    await snap(4, '2026-11-21T02:00:00.000Z');
    await snap(0, '2026-11-21T02:01:00.000Z');
    const zero = await events.waitFor((m) => m.topic === p.topics.stockZero && forLevel(shop, 'B', loc)(m), 'stock_zero of endpoint 4');
    await expectWellFormed(zero, 'stock_zero', shop);
    expect(zero.value).toMatchObject({
      previous_available_qty: 4,
      available_qty: 0,
      on_hand_qty: 0,
      change_type: 'snapshot',
      source_system: 'pos',
      seq: 1,
    });
    expect(Date.parse(zero.value.occurred_at)).toBe(Date.parse('2026-11-21T02:01:00.000Z'));
    expect(zero.value.change_type).toBe(await logChangeType(shop, zero));
    // on_hand above 0 but available_qty 0: still out of stock, no event. Then available above 0: restored.
    await snap(3, '2026-11-21T02:02:00.000Z', { available_qty: 0 });
    await snap(3, '2026-11-21T02:03:00.000Z');
    const back = await events.waitFor(
      (m) => m.topic === p.topics.stockRestored && forLevel(shop, 'B', loc)(m),
      'stock_restored of endpoint 4',
    );
    await expectWellFormed(back, 'stock_restored', shop);
    expect(back.value).toMatchObject({ previous_available_qty: 0, available_qty: 3, on_hand_qty: 3, change_type: 'snapshot', seq: 2 });
    expect(Date.parse(back.value.occurred_at)).toBe(Date.parse('2026-11-21T02:03:00.000Z'));
    await sentinel(shop, loc);
    expect(distinctBySeq(forLevel(shop, 'B', loc)).map((m) => [m.value.event_type, m.value.seq])).toEqual([
      ['stock_zero', 1],
      ['stock_restored', 2],
    ]);
  });

  it('endpoint 5 (available): a clamped delta to 0 emits stock_zero (available_delta); an absolute set above 0 emits stock_restored (available_set)', async () => {
    const { shop, loc } = await setup('ep5');
    await available(p, {
      shop,
      source_system: 'ec',
      mode: 'absolute',
      location_id: loc,
      inventory_as_of: '2026-11-21T03:00:00.000Z',
      lines: [{ barcode: 'C', available_qty: 6 }],
    });
    await available(p, {
      shop,
      source_system: 'ec',
      mode: 'delta',
      location_id: loc,
      inventory_as_of: '2026-11-21T03:01:00.000Z',
      lines: [{ barcode: 'C', available_delta: -10 }],
    });
    const zero = await events.waitFor((m) => m.topic === p.topics.stockZero && forLevel(shop, 'C', loc)(m), 'stock_zero of endpoint 5');
    await expectWellFormed(zero, 'stock_zero', shop);
    expect(zero.value).toMatchObject({
      previous_available_qty: 6,
      available_qty: 0,
      on_hand_qty: 0,
      change_type: 'available_delta',
      source_system: 'ec',
      seq: 1,
    });
    expect(Date.parse(zero.value.occurred_at)).toBe(Date.parse('2026-11-21T03:01:00.000Z'));
    expect(zero.value.change_type).toBe(await logChangeType(shop, zero));
    await available(p, {
      shop,
      source_system: 'ec',
      mode: 'absolute',
      location_id: loc,
      inventory_as_of: '2026-11-21T03:02:00.000Z',
      lines: [{ barcode: 'C', available_qty: 1 }],
    });
    const back = await events.waitFor(
      (m) => m.topic === p.topics.stockRestored && forLevel(shop, 'C', loc)(m),
      'stock_restored of endpoint 5',
    );
    await expectWellFormed(back, 'stock_restored', shop);
    expect(back.value).toMatchObject({ previous_available_qty: 0, available_qty: 1, change_type: 'available_set', seq: 2 });
    expect(back.value.change_type).toBe(await logChangeType(shop, back));
  });
});

describe('what does not emit, and seq', () => {
  it('a level created by a write emits nothing, whatever its value; writes that keep available_qty at 0 or above 0 emit nothing', async () => {
    const { shop, loc } = await setup('created', ['A', 'B', 'C', 'D']);
    await snapshot(p, {
      shop,
      source_system: 'pos',
      location_id: loc,
      lines: [
        { barcode: 'A', on_hand_qty: 0 },
        { barcode: 'B', on_hand_qty: 5 },
      ],
    });
    await available(p, { shop, source_system: 'ec', mode: 'absolute', location_id: loc, lines: [{ barcode: 'C', available_qty: 0 }] });
    await levels(p, { shop, source_system: 'wms', mode: 'delta', lines: [{ barcode: 'D', location_id: loc, available_delta: -3 }] });
    await available(p, {
      shop,
      source_system: 'ec',
      mode: 'delta',
      location_id: loc,
      lines: [
        { barcode: 'B', available_delta: -2 },
        { barcode: 'A', available_delta: -1 },
      ],
    });
    await sentinel(shop, loc);
    const mine = events.messages.filter((m) => m.value.shop === shop && !isSentinel(m));
    expect(mine).toEqual([]);
    const { rows } = await p.db.query(
      `SELECT count(*)::int AS n FROM agent_runtime.outbox WHERE topic IN ($1, $2) AND payload->>'shop' = $3 AND payload->>'barcode' NOT LIKE 'SENTINEL-%'`,
      [p.topics.stockZero, p.topics.stockRestored, shop],
    );
    expect(rows[0].n).toBe(0);
  });

  it('seq grows by one per event of the same level, across both topics and endpoints; each level has its own seq', async () => {
    const { shop, loc } = await setup('seq');
    const loc2 = await newLocation(p, shop, 'Second');
    await levels(p, {
      shop,
      source_system: 'wms',
      mode: 'absolute',
      lines: [
        { barcode: 'A', location_id: loc, available_qty: 3 },
        { barcode: 'A', location_id: loc2, available_qty: 3 },
      ],
    });
    await available(p, { shop, source_system: 'ec', mode: 'delta', location_id: loc, lines: [{ barcode: 'A', available_delta: -3 }] }); // zero 1
    await snapshot(p, { shop, source_system: 'pos', location_id: loc, lines: [{ barcode: 'A', on_hand_qty: 2 }] }); // restored 2
    await levels(p, {
      shop,
      source_system: 'wms',
      mode: 'delta',
      lines: [
        { barcode: 'A', location_id: loc, available_delta: -9 },
        { barcode: 'A', location_id: loc2, available_delta: -3 },
      ],
    }); // zero 3; loc2 zero 1
    await available(p, { shop, source_system: 'ec', mode: 'absolute', location_id: loc, lines: [{ barcode: 'A', available_qty: 7 }] }); // restored 4
    await sentinel(shop, loc);
    const unique = distinctBySeq(forLevel(shop, 'A', loc));
    expect(unique.map((m) => [m.value.event_type, m.value.seq, m.value.change_type])).toEqual([
      ['stock_zero', 1, 'available_delta'],
      ['stock_restored', 2, 'snapshot'],
      ['stock_zero', 3, 'levels_delta'],
      ['stock_restored', 4, 'available_set'],
    ]);
    const other = distinctBySeq(forLevel(shop, 'A', loc2));
    expect(other.map((m) => [m.value.event_type, m.value.seq])).toEqual([['stock_zero', 1]]);
  });

  it('D6a: a barcode repeated in one request moves through 0 and back: one stock_zero and one stock_restored, in order', async () => {
    const { shop, loc } = await setup('d6a');
    await available(p, { shop, source_system: 'ec', mode: 'absolute', location_id: loc, lines: [{ barcode: 'A', available_qty: 2 }] });
    await available(p, {
      shop,
      source_system: 'ec',
      mode: 'delta',
      location_id: loc,
      lines: [
        { barcode: 'A', available_delta: -2 },
        { barcode: 'A', available_delta: 4 },
      ],
    });
    await sentinel(shop, loc);
    const seen = events.messages.filter(forLevel(shop, 'A', loc));
    expect(
      distinctBySeq(forLevel(shop, 'A', loc)).map((m) => [
        m.value.event_type,
        m.value.seq,
        m.value.previous_available_qty,
        m.value.available_qty,
      ]),
    ).toEqual([
      ['stock_zero', 1, 2, 0],
      ['stock_restored', 2, 0, 4],
    ]);
    expect(new Set(seen.map((m) => m.value.event_id)).size).toBe(2);
  });
});

describe('redelivery (D4, D5)', () => {
  it('a command appended twice to the commands topic yields one event id and one outbox row', async () => {
    const { shop, loc } = await setup('redeliver');
    await available(p, {
      shop,
      source_system: 'ec',
      mode: 'absolute',
      location_id: loc,
      inventory_as_of: '2026-11-21T04:00:00.000Z',
      lines: [{ barcode: 'A', available_qty: 3 }],
    });
    const asOf = '2026-11-21T04:10:00.000Z';
    const command = {
      command_id: uuidv7(),
      kind: 'inventory.available' as const,
      shop,
      received_at: new Date().toISOString(),
      source: { endpoint: '/api/ingest/inventory-available' },
      source_system: 'replayed',
      inventory_as_of: asOf,
      payload_hash: 'test-redelivery',
      payload: { mode: 'absolute', location: { location_id: loc }, lines: [{ barcode: 'A', available_qty: 0 }] },
    };
    const log = createCommandLog(sink, p.topics.commands);
    await log.appendCommand(command);
    await log.appendCommand(command);
    // Later commands of the same shop are consumed after both copies (D2).
    await sentinel(shop, loc);
    const first = await events.waitFor(ofCommand(command.command_id), 'stock_zero of the redelivered command');
    await expectWellFormed(first, 'stock_zero', shop);
    expect(first.value).toMatchObject({
      change_type: 'available_set',
      source_system: 'replayed',
      previous_available_qty: 3,
      available_qty: 0,
      seq: 1,
    });
    expect(Date.parse(first.value.occurred_at)).toBe(Date.parse(asOf));
    const mine = events.messages.filter(ofCommand(command.command_id));
    expect(new Set(mine.map((m) => m.value.event_id)).size).toBe(1);
    const counts = await p.db.query(
      `SELECT (SELECT count(*)::int FROM agent_runtime.outbox WHERE command_id = $1 AND topic = $2) AS stock_rows,
              (SELECT count(*)::int FROM agent_runtime.processed_commands WHERE command_id = $1) AS processed,
              (SELECT count(*)::int FROM sot.inventory_update_logs WHERE command_id = $1) AS logs`,
      [command.command_id, p.topics.stockZero],
    );
    expect(counts.rows[0]).toEqual({ stock_rows: 1, processed: 1, logs: 1 });
    const stored = await p.db.query('SELECT status_code, body FROM agent_runtime.command_results WHERE command_id = $1', [
      command.command_id,
    ]);
    expect(stored.rows[0]).toMatchObject({ status_code: 200, body: { ok: true, lines_updated: 1 } });
    // The outbox row was published (the relay marks it).
    await waitFor(
      async () => {
        const { rows } = await p.db.query('SELECT published_at FROM agent_runtime.outbox WHERE command_id = $1 AND topic = $2', [
          command.command_id,
          p.topics.stockZero,
        ]);
        return rows[0]?.published_at ? true : null;
      },
      15000,
      'outbox row published',
    );
  });
});
