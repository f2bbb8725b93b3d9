import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { post, startPipeline, type TestPipeline } from '../support/pipeline.ts';
import {
  ING,
  INVENTORY_ENV,
  available,
  countLogs,
  dailyRows,
  inventoryLogs,
  level,
  levelRows,
  levels,
  minutesAgo,
  newLocation,
  newProducts,
  Q,
  qty,
  snapshot,
  uniqueShop,
} from '../support/inventory.ts';

// Endpoint 5, POST /api/ingest/inventory-available: only available_qty changes; absolute and
// delta modes; clamping; D15a (lines_unchanged), D15b (stale absolute), D19 (delta dedupe shared
// with endpoint 3); logs only on change; no daily rows. Request shapes and 4xx answers are the
// gateway's (services/gateway/src/routes/inventoryEdge.unit.test.ts); decisions made before any SQL runs
// (dedupe, reuse warning, repeated barcodes) are the decider's (packages/domain/src/inventory/*.unit.test.ts).
let p: TestPipeline;
beforeAll(async () => {
  p = await startPipeline({ env: INVENTORY_ENV });
});
afterAll(async () => p?.stop());

async function setup(what: string, barcodes: string[] = ['A', 'B', 'C']): Promise<{ shop: string; loc: string }> {
  const shop = uniqueShop(what);
  const loc = await newLocation(p, shop, 'Store', [{ identifier_type: 'pos', identifier_value: 'S1' }]);
  await newProducts(p, shop, barcodes);
  return { shop, loc };
}

const abs = (shop: string, loc: string, lines: Array<{ barcode: string; available_qty: number }>, extra: Record<string, unknown> = {}) =>
  available(p, { shop, source_system: 'ec-cart', mode: 'absolute', location_id: loc, lines, ...extra });
const delta = (
  shop: string,
  loc: string,
  lines: Array<{ barcode: string; available_delta: number }>,
  extra: Record<string, unknown> = {},
) => available(p, { shop, source_system: 'ec-cart', mode: 'delta', location_id: loc, lines, ...extra });

const reply = (shop: string, loc: string, mode: string, counts: Record<string, unknown>) => ({
  ok: true,
  mode,
  shop,
  location_id: loc,
  lines_processed: 0,
  lines_updated: 0,
  lines_unchanged: 0,
  lines_unresolved: 0,
  lines_clamped: 0,
  lines_deduped: 0,
  lines_stale: 0,
  unresolved: [],
  clamped: [],
  stale: [],
  ...counts,
});

describe('mode absolute', () => {
  it('sets only available_qty: on_hand, allocated, reserved (and incoming) stay as they were', async () => {
    const { shop, loc } = await setup('abs');
    await snapshot(p, {
      shop,
      source_system: 'pos',
      location_id: loc,
      inventory_as_of: minutesAgo(30),
      lines: [{ barcode: 'A', on_hand_qty: 10, available_qty: 8, allocated_qty: 1, reserved_qty: 2, incoming_qty: 4 }],
    });
    const r = await abs(shop, loc, [{ barcode: 'A', available_qty: 5 }]);
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual(reply(shop, loc, 'absolute', { lines_processed: 1, lines_updated: 1 }));
    expect(qty(await level(p, shop, 'A', loc))).toEqual(Q(10, 5, 1, 2, 4));
    const log = (await inventoryLogs(p, shop)).at(-1)!;
    expect(log).toMatchObject({ change_type: 'available_set', change_source: 'ec-cart', changed_fields: ['available_qty'] });
    expect(log.before_data).toEqual(Q(10, 8, 1, 2, 4));
    expect(log.after_data).toEqual(Q(10, 5, 1, 2, 4));
  });

  it('a missing level is created with on_hand_qty 0 (and the other quantities 0)', async () => {
    const { shop, loc } = await setup('create');
    const r = await abs(shop, loc, [{ barcode: 'B', available_qty: 7 }]);
    expect(r.json).toEqual(reply(shop, loc, 'absolute', { lines_processed: 1, lines_updated: 1 }));
    expect(qty(await level(p, shop, 'B', loc))).toEqual(Q(0, 7));
    const logs = await inventoryLogs(p, shop);
    expect(logs.map((l) => [l.change_type, l.before_data, l.after_data])).toEqual([['available_set', null, Q(0, 7)]]);
  });

  it('resending the same absolute request changes nothing: lines_updated 0, lines_unchanged counted, no logs (D15a)', async () => {
    const { shop, loc } = await setup('abs-resend');
    const lines = [
      { barcode: 'A', available_qty: 3 },
      { barcode: 'B', available_qty: 4 },
    ];
    const first = await abs(shop, loc, lines, { idempotency_key: 'abs-key' });
    expect(first.json).toMatchObject({ lines_updated: 2, lines_unchanged: 0 });
    const rowsBefore = await levelRows(p, shop);
    const second = await abs(shop, loc, lines, { idempotency_key: 'abs-key' });
    expect(second.status, second.text).toBe(200);
    expect(second.json).toEqual(reply(shop, loc, 'absolute', { lines_processed: 2, lines_updated: 0, lines_unchanged: 2 }));
    expect((await levelRows(p, shop)).map(qty)).toEqual(rowsBefore.map(qty));
    expect(await countLogs(p, shop)).toBe(2);
  });

  it('absolute mode records the idempotency_key in the logs only: the same key applies again with other values (D19)', async () => {
    const { shop, loc } = await setup('abs-key');
    await abs(shop, loc, [{ barcode: 'A', available_qty: 3 }], { idempotency_key: 'k-abs' });
    const again = await abs(shop, loc, [{ barcode: 'A', available_qty: 9 }], { idempotency_key: 'k-abs' });
    expect(again.json).toMatchObject({ lines_updated: 1, lines_deduped: 0 });
    expect((await level(p, shop, 'A', loc))?.available_qty).toBe(9);
    // A delta with a key only ever used in absolute mode is not a duplicate.
    const d = await delta(shop, loc, [{ barcode: 'A', available_delta: 1 }], { idempotency_key: 'k-abs' });
    expect(d.json).toMatchObject({ lines_updated: 1, lines_deduped: 0 });
    expect((await level(p, shop, 'A', loc))?.available_qty).toBe(10);
    expect((await inventoryLogs(p, shop)).map((l) => l.idempotency_key)).toEqual(['k-abs', 'k-abs', 'k-abs']);
  });

  it("D15b: an absolute write older than the level's last absolute write is stale and not applied; a delta always applies", async () => {
    const { shop, loc } = await setup('stale');
    await abs(shop, loc, [{ barcode: 'A', available_qty: 10 }], { inventory_as_of: '2026-11-21T03:00:00.000Z' });
    const r = await abs(
      shop,
      loc,
      [
        { barcode: 'A', available_qty: 1 },
        { barcode: 'B', available_qty: 2 },
      ],
      { inventory_as_of: '2026-11-21T02:00:00.000Z' },
    );
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual(
      reply(shop, loc, 'absolute', {
        lines_processed: 2,
        lines_updated: 1,
        lines_stale: 1,
        stale: [{ barcode: 'A', location_id: loc, stored_as_of: expect.any(String) }],
      }),
    );
    expect(Date.parse(r.json.stale[0].stored_as_of)).toBe(Date.parse('2026-11-21T03:00:00.000Z'));
    expect((await level(p, shop, 'A', loc))?.available_qty).toBe(10);
    const d = await delta(shop, loc, [{ barcode: 'A', available_delta: -4 }], { inventory_as_of: '2026-11-21T01:00:00.000Z' });
    expect(d.json).toMatchObject({ lines_updated: 1, lines_stale: 0 });
    expect((await level(p, shop, 'A', loc))?.available_qty).toBe(6);
  });
});

describe('mode delta', () => {
  it('adds the delta to available_qty (positive and negative), logging available_delta', async () => {
    const { shop, loc } = await setup('delta');
    await snapshot(p, {
      shop,
      source_system: 'pos',
      location_id: loc,
      inventory_as_of: minutesAgo(30),
      lines: [{ barcode: 'A', on_hand_qty: 20, available_qty: 10, reserved_qty: 3 }],
    });
    const r = await delta(shop, loc, [
      { barcode: 'A', available_delta: 5 },
      { barcode: 'A', available_delta: -2 },
      { barcode: 'B', available_delta: 4 },
    ]);
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual(reply(shop, loc, 'delta', { lines_processed: 3, lines_updated: 3 }));
    expect(qty(await level(p, shop, 'A', loc))).toEqual(Q(20, 13, 0, 3));
    expect(qty(await level(p, shop, 'B', loc))).toEqual(Q(0, 4));
    const logs = await inventoryLogs(p, shop, { barcode: 'A' });
    expect(logs.map((l) => [l.change_type, l.before_data?.available_qty, l.after_data.available_qty])).toEqual([
      ['snapshot', undefined, 10],
      ['available_delta', 10, 15],
      ['available_delta', 15, 13],
    ]);
    expect(logs[1]!.change_source).toBe('ec-cart');
  });

  it('a zero delta changes nothing and writes no log', async () => {
    const { shop, loc } = await setup('zero');
    await abs(shop, loc, [{ barcode: 'A', available_qty: 3 }]);
    const r = await delta(shop, loc, [{ barcode: 'A', available_delta: 0 }]);
    expect(r.json).toMatchObject({ lines_updated: 0, lines_unchanged: 1 });
    expect(await countLogs(p, shop)).toBe(1);
  });

  it('a result below zero is stored as 0 and reported in clamped as {barcode, computed, set: 0}', async () => {
    const { shop, loc } = await setup('clamp');
    await abs(shop, loc, [
      { barcode: 'A', available_qty: 2 },
      { barcode: 'B', available_qty: 1 },
    ]);
    const r = await delta(shop, loc, [
      { barcode: 'A', available_delta: -5 },
      { barcode: 'B', available_delta: -1 },
      { barcode: 'C', available_delta: -3 },
    ]);
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual(
      reply(shop, loc, 'delta', {
        lines_processed: 3,
        lines_updated: 3,
        lines_clamped: 2,
        clamped: [
          { barcode: 'A', computed: -3, set: 0 },
          { barcode: 'C', computed: -3, set: 0 },
        ],
      }),
    );
    for (const b of ['A', 'B', 'C']) expect((await level(p, shop, b, loc))?.available_qty).toBe(0);
  });

  it('unknown barcodes are unresolved with product_not_found and nothing is written for them', async () => {
    const { shop, loc } = await setup('unres');
    const r = await delta(shop, loc, [
      { barcode: 'GHOST', available_delta: 3 },
      { barcode: 'A', available_delta: 1 },
    ]);
    expect(r.json).toEqual(
      reply(shop, loc, 'delta', {
        lines_processed: 2,
        lines_updated: 1,
        lines_unresolved: 1,
        unresolved: [{ barcode: 'GHOST', reason: 'product_not_found' }],
      }),
    );
    expect((await levelRows(p, shop)).map((l) => l.barcode)).toEqual(['A']);
  });
});

describe('D19: delta dedupe by idempotency_key', () => {
  it('the key is per shop: the same key in another shop applies', async () => {
    const a = await setup('shop-a');
    const b = await setup('shop-b');
    await delta(a.shop, a.loc, [{ barcode: 'A', available_delta: 1 }], { idempotency_key: 'evt-shared' });
    const r = await delta(b.shop, b.loc, [{ barcode: 'A', available_delta: 1 }], { idempotency_key: 'evt-shared' });
    expect(r.json).toMatchObject({ lines_updated: 1, lines_deduped: 0 });
  });

  it('the key is shared with the delta mode of endpoint 3, both ways', async () => {
    const { shop, loc } = await setup('shared');
    const viaLevels = await levels(p, {
      shop,
      source_system: 'wms',
      mode: 'delta',
      idempotency_key: 'evt-3',
      lines: [{ barcode: 'A', location_id: loc, available_delta: 4 }],
    });
    expect(viaLevels.json).toMatchObject({ lines_updated: 1 });
    const dup = await delta(shop, loc, [{ barcode: 'A', available_delta: 4 }], { idempotency_key: 'evt-3' });
    expect(dup.status, dup.text).toBe(200);
    expect(dup.json).toMatchObject({ lines_updated: 0, lines_deduped: 1 });
    expect((await level(p, shop, 'A', loc))?.available_qty).toBe(4);

    const first = await delta(shop, loc, [{ barcode: 'B', available_delta: 2 }], { idempotency_key: 'evt-4' });
    expect(first.json).toMatchObject({ lines_updated: 1 });
    const dup2 = await levels(p, {
      shop,
      source_system: 'wms',
      mode: 'delta',
      idempotency_key: 'evt-4',
      lines: [{ barcode: 'B', location_id: loc, available_delta: 2 }],
    });
    expect(dup2.status, dup2.text).toBe(200);
    expect(dup2.json).toMatchObject({ lines_updated: 0, lines_deduped: 1 });
    expect((await level(p, shop, 'B', loc))?.available_qty).toBe(2);
    expect(await countLogs(p, shop)).toBe(2);
  });
});

describe('bursts and repeats', () => {
  it('D19: the same delta sent concurrently (over two gateways) with one key is applied exactly once', async () => {
    const { shop, loc } = await setup('burst');
    await abs(shop, loc, [{ barcode: 'A', available_qty: 10 }]);
    const second = p.gateways.length > 1 ? p.gateways[1]! : await p.startGateway();
    const url = (i: number) => (i % 2 ? `http://127.0.0.1:${second.port}` : p.url());
    const replies = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        post(
          `${url(i)}/api/ingest/inventory-available`,
          {
            shop,
            source_system: 'ec',
            mode: 'delta',
            location_id: loc,
            idempotency_key: 'order-42',
            lines: [{ barcode: 'A', available_delta: -1 }],
          },
          ING,
        ),
      ),
    );
    for (const r of replies) expect(r.status, r.text).toBe(200);
    expect(replies.filter((r) => r.json.lines_updated === 1)).toHaveLength(1);
    expect(replies.filter((r) => r.json.lines_deduped === 1)).toHaveLength(7);
    expect((await level(p, shop, 'A', loc))?.available_qty).toBe(9);
    expect((await inventoryLogs(p, shop)).map((l) => l.change_type)).toEqual(['available_set', 'available_delta']);
    // The key is recorded once (the deduped resends record nothing).
    const { rows } = await p.db.query('SELECT count(*)::int AS n FROM agent_runtime.idempotency_keys WHERE shop = $1', [shop]);
    expect(rows[0].n).toBe(1);
  });
});

describe('logs and daily history', () => {
  it('available_set / available_delta logs only on change; this endpoint writes no daily rows', async () => {
    const { shop, loc } = await setup('nodaily');
    await abs(shop, loc, [{ barcode: 'A', available_qty: 4 }]);
    await abs(shop, loc, [{ barcode: 'A', available_qty: 4 }]);
    await delta(shop, loc, [{ barcode: 'A', available_delta: 2 }]);
    await delta(shop, loc, [{ barcode: 'B', available_delta: -1 }]); // created at 0 (clamped)
    expect((await inventoryLogs(p, shop)).map((l) => [l.barcode, l.change_type])).toEqual([
      ['A', 'available_set'],
      ['A', 'available_delta'],
      ['B', 'available_delta'],
    ]);
    expect(await dailyRows(p, shop)).toEqual([]);
  });

  it('a daily row written by the snapshot endpoint is not touched by later available writes', async () => {
    const { shop, loc } = await setup('keepdaily');
    await snapshot(p, {
      shop,
      source_system: 'pos',
      location_id: loc,
      inventory_as_of: minutesAgo(10),
      lines: [{ barcode: 'A', on_hand_qty: 6 }],
    });
    const before = await dailyRows(p, shop);
    await abs(shop, loc, [{ barcode: 'A', available_qty: 1 }]);
    await delta(shop, loc, [{ barcode: 'A', available_delta: 3 }]);
    expect((await level(p, shop, 'A', loc))?.available_qty).toBe(4);
    expect(await dailyRows(p, shop)).toEqual(before);
  });
});

describe('size (D11)', () => {
  it('a 10,000-line delta request is accepted (200) and a resend with its key is deduped in full', async () => {
    const shop = uniqueShop('big');
    const loc = await newLocation(p, shop, 'Big store');
    const barcodes = Array.from({ length: 10_000 }, (_, i) => `45${String(i).padStart(11, '0')}`);
    await newProducts(p, shop, barcodes);
    const lines = barcodes.map((barcode, i) => ({ barcode, available_delta: (i % 7) + 1 }));
    const started = performance.now();
    const r = await delta(shop, loc, lines, { idempotency_key: 'big-1' });
    console.info(`[timing] 10,000-line inventory-available delta answered in ${Math.round(performance.now() - started)} ms`);
    expect(r.status, r.text.slice(0, 300)).toBe(200);
    expect(r.json).toMatchObject({ ok: true, lines_processed: 10_000, lines_updated: 10_000, lines_deduped: 0 });
    const again = await delta(shop, loc, lines, { idempotency_key: 'big-1' });
    expect(again.json).toMatchObject({ lines_processed: 10_000, lines_updated: 0, lines_deduped: 10_000 });
    const { rows } = await p.db.query(
      'SELECT count(*)::int AS n, sum(available_qty)::int AS total FROM agent_read.inventory_levels WHERE shop = $1',
      [shop],
    );
    expect(rows[0]).toEqual({ n: 10_000, total: lines.reduce((s, l) => s + l.available_delta, 0) });
    expect(await countLogs(p, shop)).toBe(10_000);
  }, 120_000);
});
