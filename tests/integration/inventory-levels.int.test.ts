import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPipeline, type TestPipeline } from '../support/pipeline.ts';
import {
  INVENTORY_ENV,
  dailyRows,
  inventoryLogs,
  lastCommandId,
  level,
  levelRows,
  levels,
  newProducts,
  Q,
  qty,
  registerLocations,
  uniqueShop,
} from '../support/inventory.ts';

// Endpoint 3, POST /api/inventory-levels/bulk-upsert (D17): lines for several locations, absolute
// or delta for the five quantities, clamping, per-line unresolved reasons, levels_set /
// levels_delta logs, stock_zero in the response (D18), D15b for absolute lines. Request shapes and
// 4xx answers: services/gateway/src/routes/inventoryEdge.unit.test.ts; D19 dedupe and per-line unresolved
// reasons: packages/domain/src/inventory/*.unit.test.ts (the SQL path of D19 is shown by
// inventory-available's cases, per-line locations by inventory-locations').
let p: TestPipeline;
beforeAll(async () => {
  p = await startPipeline({ env: INVENTORY_ENV });
});
afterAll(async () => p?.stop());

interface Setup {
  shop: string;
  l1: string;
  l2: string;
}

async function setup(what: string, barcodes: string[] = ['A', 'B', 'C']): Promise<Setup> {
  const shop = uniqueShop(what);
  const r = await registerLocations(p, shop, [
    { name: 'Store', identifiers: [{ identifier_type: 'pos', identifier_value: 'S1' }] },
    { name: 'Warehouse', identifiers: [{ identifier_type: 'wms', identifier_value: 'W1' }] },
  ]);
  expect(r.status, r.text).toBe(200);
  await newProducts(p, shop, barcodes);
  return { shop, l1: r.json.locations[0].location_id, l2: r.json.locations[1].location_id };
}

const send = (shop: string, mode: 'absolute' | 'delta', lines: unknown[], extra: Record<string, unknown> = {}) =>
  levels(p, { shop, source_system: 'wms-z', mode, lines, ...extra });

const reply = (shop: string, mode: string, counts: Record<string, unknown>) => ({
  ok: true,
  mode,
  shop,
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
  stock_zero: [],
  ...counts,
});

describe('mode absolute', () => {
  it('writes several locations in one request (by location_id and by identifier); a new row starts at 0 for omitted fields', async () => {
    const { shop, l1, l2 } = await setup('multi');
    const r = await send(shop, 'absolute', [
      { barcode: 'A', location_id: l1, on_hand_qty: 10, available_qty: 7 },
      { barcode: 'A', location: { identifier_type: 'wms', identifier_value: 'W1' }, on_hand_qty: 100, incoming_qty: 5 },
      { barcode: 'B', location_id: l2, allocated_qty: 2, reserved_qty: 1 },
    ]);
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual(reply(shop, 'absolute', { lines_processed: 3, lines_updated: 3 }));
    expect(qty(await level(p, shop, 'A', l1))).toEqual(Q(10, 7));
    expect(qty(await level(p, shop, 'A', l2))).toEqual(Q(100, 0, 0, 0, 5));
    expect(qty(await level(p, shop, 'B', l2))).toEqual(Q(0, 0, 2, 1, 0));
    expect(await levelRows(p, shop)).toHaveLength(3);
    const logs = await inventoryLogs(p, shop);
    expect(logs.map((l) => [l.barcode, l.location_id, l.change_type, l.change_source, l.before_data])).toEqual([
      ['A', l1, 'levels_set', 'wms-z', null],
      ['A', l2, 'levels_set', 'wms-z', null],
      ['B', l2, 'levels_set', 'wms-z', null],
    ]);
    expect(logs[0]!.command_id).toBe(await lastCommandId(p, shop, 'inventory.levels'));
    // Endpoint 3 keeps no daily history (D16: that belongs to the snapshot endpoint and the daily job).
    expect(await dailyRows(p, shop)).toEqual([]);
  });

  it('omitted fields are unchanged; an unchanged line counts in lines_unchanged and writes no log', async () => {
    const { shop, l1 } = await setup('omitted');
    await send(shop, 'absolute', [
      { barcode: 'A', location_id: l1, on_hand_qty: 10, available_qty: 8, allocated_qty: 1, reserved_qty: 1, incoming_qty: 3 },
    ]);
    const r = await send(shop, 'absolute', [
      { barcode: 'A', location_id: l1, reserved_qty: 4 },
      { barcode: 'A', location_id: l1, reserved_qty: 4, on_hand_qty: 10 },
    ]);
    expect(r.json).toEqual(reply(shop, 'absolute', { lines_processed: 2, lines_updated: 1, lines_unchanged: 1 }));
    expect(qty(await level(p, shop, 'A', l1))).toEqual(Q(10, 8, 1, 4, 3));
    const logs = await inventoryLogs(p, shop);
    expect(logs).toHaveLength(2);
    expect(logs[1]).toMatchObject({
      change_type: 'levels_set',
      changed_fields: ['reserved_qty'],
      before_data: Q(10, 8, 1, 1, 3),
      after_data: Q(10, 8, 1, 4, 3),
    });
  });

  it("D15b: an absolute line older than the level's last absolute write is stale; other lines apply", async () => {
    const { shop, l1, l2 } = await setup('stale');
    await send(shop, 'absolute', [{ barcode: 'A', location_id: l1, on_hand_qty: 9 }], { inventory_as_of: '2026-11-21T04:00:00.000Z' });
    const r = await send(
      shop,
      'absolute',
      [
        { barcode: 'A', location_id: l1, on_hand_qty: 1 },
        { barcode: 'A', location_id: l2, on_hand_qty: 2 },
      ],
      { inventory_as_of: '2026-11-21T03:00:00.000Z' },
    );
    expect(r.json).toEqual(
      reply(shop, 'absolute', {
        lines_processed: 2,
        lines_updated: 1,
        lines_stale: 1,
        stale: [{ barcode: 'A', location_id: l1, stored_as_of: expect.any(String) }],
      }),
    );
    expect(Date.parse(r.json.stale[0].stored_as_of)).toBe(Date.parse('2026-11-21T04:00:00.000Z'));
    expect((await level(p, shop, 'A', l1))?.on_hand_qty).toBe(9);
    expect((await level(p, shop, 'A', l2))?.on_hand_qty).toBe(2);
  });
});

describe('mode delta', () => {
  it('adds <field>_delta to each of the five quantities (and accepts the <field>_qty_delta alias)', async () => {
    const { shop, l1, l2 } = await setup('delta');
    await send(shop, 'absolute', [
      { barcode: 'A', location_id: l1, on_hand_qty: 10, available_qty: 10, allocated_qty: 10, reserved_qty: 10, incoming_qty: 10 },
    ]);
    const r = await send(
      shop,
      'delta',
      [
        { barcode: 'A', location_id: l1, on_hand_delta: 1, available_delta: -2, allocated_delta: 3, reserved_delta: -4, incoming_delta: 5 },
        { barcode: 'A', location_id: l2, on_hand_qty_delta: 6, available_qty_delta: 2 },
      ],
      { inventory_as_of: '2026-11-20T00:00:00.000Z' },
    );
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual(reply(shop, 'delta', { lines_processed: 2, lines_updated: 2 }));
    expect(qty(await level(p, shop, 'A', l1))).toEqual(Q(11, 8, 13, 6, 15));
    expect(qty(await level(p, shop, 'A', l2))).toEqual(Q(6, 2));
    const logs = await inventoryLogs(p, shop);
    expect(logs.map((l) => [l.location_id, l.change_type, l.change_source])).toEqual([
      [l1, 'levels_set', 'wms-z'],
      [l1, 'levels_delta', 'wms-z'],
      [l2, 'levels_delta', 'wms-z'],
    ]);
    expect(logs[1]!.changed_fields).toEqual(['on_hand_qty', 'available_qty', 'allocated_qty', 'reserved_qty', 'incoming_qty']);
  });

  it('results below zero are stored as 0 and reported in clamped as {barcode, location_id, field, computed, set}', async () => {
    const { shop, l1, l2 } = await setup('clamp');
    await send(shop, 'absolute', [
      { barcode: 'A', location_id: l1, on_hand_qty: 2, available_qty: 1, reserved_qty: 5 },
      { barcode: 'B', location_id: l2, on_hand_qty: 3 },
    ]);
    const r = await send(shop, 'delta', [
      { barcode: 'A', location_id: l1, on_hand_delta: -5, available_delta: -1, reserved_delta: -7 },
      { barcode: 'B', location_id: l2, on_hand_delta: -1 },
    ]);
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual(
      reply(shop, 'delta', {
        lines_processed: 2,
        lines_updated: 2,
        lines_clamped: 1,
        clamped: [
          { barcode: 'A', location_id: l1, field: 'on_hand_qty', computed: -3, set: 0 },
          { barcode: 'A', location_id: l1, field: 'reserved_qty', computed: -2, set: 0 },
        ],
        stock_zero: [{ barcode: 'A', location_id: l1 }],
      }),
    );
    expect(qty(await level(p, shop, 'A', l1))).toEqual(Q(0, 0, 0, 0));
    expect(qty(await level(p, shop, 'B', l2))).toEqual(Q(2, 0));
  });
});

describe('stock_zero in the response (D18)', () => {
  it('lists each level whose available_qty moved from above 0 to 0, by delta or absolute; not a level created at 0', async () => {
    const { shop, l1, l2 } = await setup('zero');
    await send(shop, 'absolute', [
      { barcode: 'A', location_id: l1, on_hand_qty: 5, available_qty: 5 },
      { barcode: 'A', location_id: l2, on_hand_qty: 5, available_qty: 2 },
      { barcode: 'B', location_id: l1, on_hand_qty: 1, available_qty: 1 },
    ]);
    const d = await send(shop, 'delta', [
      { barcode: 'A', location_id: l1, available_delta: -5 },
      { barcode: 'A', location_id: l2, available_delta: -1 },
      { barcode: 'C', location_id: l1, on_hand_delta: 3 }, // created with available 0: never in stock
    ]);
    expect(d.json).toMatchObject({ lines_updated: 3, stock_zero: [{ barcode: 'A', location_id: l1 }] });
    const a = await send(shop, 'absolute', [
      { barcode: 'B', location_id: l1, available_qty: 0 },
      { barcode: 'A', location_id: l2, available_qty: 0 },
      { barcode: 'C', location_id: l2, available_qty: 0 }, // created at 0
      { barcode: 'A', location_id: l1, available_qty: 0 }, // already 0
    ]);
    expect(a.json).toMatchObject({
      lines_updated: 3,
      lines_unchanged: 1,
      stock_zero: [
        { barcode: 'B', location_id: l1 },
        { barcode: 'A', location_id: l2 },
      ],
    });
  });
});

describe('size (D11, D17)', () => {
  it('a 10,000-line request over two locations is accepted (200) and written in full', async () => {
    const { shop, l1, l2 } = await setup('big');
    const barcodes = Array.from({ length: 5_000 }, (_, i) => `47${String(i).padStart(11, '0')}`);
    await newProducts(p, shop, barcodes);
    const lines = barcodes.flatMap((barcode, i) => [
      { barcode, location_id: l1, on_hand_qty: i % 10, available_qty: i % 5 },
      { barcode, location: { identifier_type: 'wms', identifier_value: 'W1' }, on_hand_qty: 1, incoming_qty: 2 },
    ]);
    expect(lines).toHaveLength(10_000);
    const started = performance.now();
    const r = await send(shop, 'absolute', lines);
    console.info(`[timing] 10,000-line inventory-levels absolute answered in ${Math.round(performance.now() - started)} ms`);
    expect(r.status, r.text.slice(0, 300)).toBe(200);
    expect(r.json).toMatchObject({ ok: true, lines_processed: 10_000, lines_updated: 10_000, lines_unresolved: 0 });
    const { rows } = await p.db.query(
      'SELECT location_id, count(*)::int AS n, sum(on_hand_qty)::int AS on_hand FROM agent_read.inventory_levels WHERE shop = $1 GROUP BY location_id',
      [shop],
    );
    expect(rows.sort((a, b) => (a.location_id === l1 ? -1 : b.location_id === l1 ? 1 : 0))).toEqual([
      { location_id: l1, n: 5_000, on_hand: barcodes.reduce((s, _, i) => s + (i % 10), 0) },
      { location_id: l2, n: 5_000, on_hand: 5_000 },
    ]);
  }, 120_000);
});
