import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { productId } from '@ingest/domain';
import { get, post, startPipeline, waitFor, type TestPipeline } from '../support/pipeline.ts';
import {
  ING,
  INVENTORY_ENV,
  countLogs,
  dailyRows,
  inventoryLogs,
  lastCommandId,
  level,
  levelRows,
  newLocation,
  newProducts,
  Q,
  qty,
  snapshot,
  uniqueShop,
} from '../support/inventory.ts';

// Endpoint 4, POST /api/ingest/inventory-snapshot: behaviour rules 1-5 of the spec with D15
// (scope), D15a (counting), D15b (late absolute writes), D16 (daily row), D16b (unchanged daily
// rows) and D6a (in-order lines), through the SQL path. Request shapes, D11 statuses and the
// inventory_as_of range: services/gateway/src/routes/inventoryEdge.unit.test.ts.
let p: TestPipeline;
beforeAll(async () => {
  p = await startPipeline({ env: INVENTORY_ENV });
});
afterAll(async () => p?.stop());

/** A shop with one location and some products in the master. */
async function setup(what: string, barcodes: string[] = ['A', 'B', 'C']): Promise<{ shop: string; loc: string }> {
  const shop = uniqueShop(what);
  const loc = await newLocation(p, shop, 'Store', [{ identifier_type: 'pos', identifier_value: 'S1' }]);
  await newProducts(p, shop, barcodes);
  return { shop, loc };
}

const body = (shop: string, loc: string, lines: unknown[], extra: Record<string, unknown> = {}) => ({
  shop,
  source_system: 'pos-x',
  location_id: loc,
  lines,
  ...extra,
});

// 2026-11-20T16:30Z is 2026-11-21 01:30 in Asia/Tokyo; 14:00Z is still 2026-11-20 (23:00 JST).
const AS_OF = '2026-11-20T16:30:00.000Z';
/** An instant m minutes from now (negative: in the past). */
const minutes = (m: number): string => new Date(Date.now() + m * 60_000).toISOString();

describe("rules 1, 2 and D16: levels, the day's daily row, logs of changed lines", () => {
  it('upserts the levels and the daily row for the business date of inventory_as_of (Asia/Tokyo)', async () => {
    const { shop, loc } = await setup('rule1');
    const r = await snapshot(
      p,
      body(
        shop,
        loc,
        [
          { barcode: 'A', on_hand_qty: 10, available_qty: 8, allocated_qty: 1, reserved_qty: 1, incoming_qty: 5 },
          { barcode: 'B', on_hand_qty: 3 },
        ],
        { inventory_as_of: AS_OF },
      ),
    );
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({
      ok: true,
      shop,
      location_id: loc,
      lines_processed: 2,
      lines_upserted: 2,
      lines_unresolved: 0,
      logs_written: 2,
      lines_stale: 0,
      unresolved: [],
      stale: [],
    });
    const rows = await levelRows(p, shop);
    expect(rows.map((l) => [l.barcode, l.location_id, qty(l), l.product_name])).toEqual([
      ['A', loc, Q(10, 8, 1, 1, 5), 'Product A'],
      ['B', loc, Q(3, 3), 'Product B'],
    ]);
    expect(rows[0]!.product_id).toBe(productId(shop, 'A'));
    expect(rows[0]!.inventory_as_of?.toISOString()).toBe(AS_OF);

    const daily = await dailyRows(p, shop);
    expect(
      daily.map((d) => [
        d.barcode,
        d.snapshot_date,
        d.source,
        d.on_hand_qty,
        d.available_qty,
        d.allocated_qty,
        d.reserved_qty,
        d.incoming_qty,
      ]),
    ).toEqual([
      ['A', '2026-11-21', 'snapshot', 10, 8, 1, 1, 5],
      ['B', '2026-11-21', 'snapshot', 3, 3, 0, 0, 0],
    ]);
    expect(daily[0]!.inventory_as_of.toISOString()).toBe(AS_OF);
  });

  it('an inventory_as_of before midnight Tokyo time lands on the previous business date; each date has its own row', async () => {
    const { shop, loc } = await setup('tz');
    expect(
      (await snapshot(p, body(shop, loc, [{ barcode: 'A', on_hand_qty: 1 }], { inventory_as_of: '2026-11-20T14:59:59.000Z' }))).status,
    ).toBe(200);
    expect(
      (await snapshot(p, body(shop, loc, [{ barcode: 'A', on_hand_qty: 2 }], { inventory_as_of: '2026-11-20T15:00:00.000Z' }))).status,
    ).toBe(200);
    // Same business day again: the day's row is upserted, not duplicated.
    expect(
      (await snapshot(p, body(shop, loc, [{ barcode: 'A', on_hand_qty: 4 }], { inventory_as_of: '2026-11-20T20:00:00.000Z' }))).status,
    ).toBe(200);
    // An offset in the request is honoured: 2026-11-21T08:00+09:00 is 2026-11-20T23:00Z, still the 21st in Tokyo.
    expect(
      (await snapshot(p, body(shop, loc, [{ barcode: 'A', on_hand_qty: 5 }], { inventory_as_of: '2026-11-21T08:00:00+09:00' }))).status,
    ).toBe(200);
    const daily = await dailyRows(p, shop);
    expect(daily.map((d) => [d.snapshot_date, d.on_hand_qty])).toEqual([
      ['2026-11-20', 1],
      ['2026-11-21', 5],
    ]);
  });

  it('logs change_type snapshot only for lines whose values changed, with change_source = source_system', async () => {
    const { shop, loc } = await setup('rule2');
    await snapshot(
      p,
      body(
        shop,
        loc,
        [
          { barcode: 'A', on_hand_qty: 5 },
          { barcode: 'B', on_hand_qty: 6 },
        ],
        { inventory_as_of: '2026-11-21T01:00:00.000Z' },
      ),
    );
    const r = await snapshot(
      p,
      body(
        shop,
        loc,
        [
          { barcode: 'A', on_hand_qty: 5 },
          { barcode: 'B', on_hand_qty: 6, available_qty: 4 },
        ],
        {
          source_system: 'wms-y',
          inventory_as_of: '2026-11-21T02:00:00.000Z',
          idempotency_key: 'audit-1',
        },
      ),
    );
    expect(r.status, r.text).toBe(200);
    expect(r.json).toMatchObject({ lines_processed: 2, lines_upserted: 2, logs_written: 1, lines_unresolved: 0 });
    const logs = await inventoryLogs(p, shop);
    expect(logs.map((l) => [l.barcode, l.change_type, l.change_source])).toEqual([
      ['A', 'snapshot', 'pos-x'],
      ['B', 'snapshot', 'pos-x'],
      ['B', 'snapshot', 'wms-y'],
    ]);
    const last = logs[2]!;
    expect(last.before_data).toEqual(Q(6, 6));
    expect(last.after_data).toEqual(Q(6, 4));
    expect(last.changed_fields).toEqual(['available_qty']);
    expect(last.idempotency_key).toBe('audit-1');
    expect(last.location_id).toBe(loc);
    expect(last.inventory_as_of.toISOString()).toBe('2026-11-21T02:00:00.000Z');
    expect(last.command_id).toBe(await lastCommandId(p, shop, 'inventory.snapshot'));
    expect(logs[0]!.before_data).toBeNull();
  });
});

describe('D16b: the daily row is rewritten only when its quantities or source change', () => {
  /** The day's stored row of a barcode, with the columns agent_read leaves out and the tuple's xmin. */
  async function storedDailyRow(shop: string, barcode: string) {
    const { rows } = await p.db.query<{ xmin: string; command_id: string; inventory_as_of: Date; on_hand_qty: number; source: string }>(
      `SELECT xmin::text AS xmin, command_id, inventory_as_of, on_hand_qty, source
         FROM sot.inventory_daily_snapshots WHERE shop = $1 AND barcode = $2`,
      [shop, barcode],
    );
    expect(rows).toHaveLength(1);
    return rows[0]!;
  }

  it('D16b: a resend and a later same-day snapshot with equal values leave the row as the first command wrote it (xmin too); D15a counts unchanged', async () => {
    const { shop, loc } = await setup('d16b');
    const lines = [{ barcode: 'A', on_hand_qty: 4, available_qty: 3 }];
    const first = await snapshot(p, body(shop, loc, lines, { inventory_as_of: AS_OF }));
    expect(first.status, first.text).toBe(200);
    const firstCommand = await lastCommandId(p, shop, 'inventory.snapshot');
    const written = await storedDailyRow(shop, 'A');
    expect(written).toMatchObject({ command_id: firstCommand, on_hand_qty: 4, source: 'snapshot' });
    expect(written.inventory_as_of.toISOString()).toBe(AS_OF);

    const resent = await snapshot(p, body(shop, loc, lines, { inventory_as_of: AS_OF }));
    expect(resent.status, resent.text).toBe(200);
    expect(resent.json).toEqual({ ...first.json, logs_written: 0 });
    // Two hours later, still 2026-11-21 in Tokyo, with the same values.
    const later = await snapshot(p, body(shop, loc, lines, { inventory_as_of: '2026-11-20T18:30:00.000Z' }));
    expect(later.status, later.text).toBe(200);
    expect(later.json).toMatchObject({ lines_processed: 1, lines_upserted: 1, logs_written: 0, lines_stale: 0 });
    expect(await lastCommandId(p, shop, 'inventory.snapshot')).not.toBe(firstCommand);

    expect(await storedDailyRow(shop, 'A')).toEqual(written);
    // The level still records the later absolute write (D15b).
    expect((await level(p, shop, 'A', loc))?.inventory_as_of?.toISOString()).toBe('2026-11-20T18:30:00.000Z');

    // A changed quantity the same day rewrites it, naming the command that changed it.
    const changed = await snapshot(
      p,
      body(shop, loc, [{ barcode: 'A', on_hand_qty: 5, available_qty: 3 }], { inventory_as_of: '2026-11-20T19:00:00.000Z' }),
    );
    expect(changed.status, changed.text).toBe(200);
    const rewritten = await storedDailyRow(shop, 'A');
    expect(rewritten).toMatchObject({ command_id: await lastCommandId(p, shop, 'inventory.snapshot'), on_hand_qty: 5 });
    expect(rewritten.command_id).not.toBe(firstCommand);
    expect(rewritten.inventory_as_of.toISOString()).toBe('2026-11-20T19:00:00.000Z');
    expect(rewritten.xmin).not.toBe(written.xmin);
  });
});

describe('rule 3: unknown barcodes', () => {
  it('a barcode not in the product master is skipped and reported as product_not_found; the other lines are applied', async () => {
    const { shop, loc } = await setup('rule3');
    const r = await snapshot(
      p,
      body(shop, loc, [
        { barcode: 'A', on_hand_qty: 1 },
        { barcode: 'GHOST', on_hand_qty: 9 },
        { barcode: 'B', on_hand_qty: 2 },
      ]),
    );
    expect(r.status, r.text).toBe(200);
    expect(r.json).toMatchObject({
      ok: true,
      lines_processed: 3,
      lines_upserted: 2,
      lines_unresolved: 1,
      logs_written: 2,
      unresolved: [{ barcode: 'GHOST', reason: 'product_not_found' }],
    });
    expect((await levelRows(p, shop)).map((l) => l.barcode)).toEqual(['A', 'B']);
    expect((await dailyRows(p, shop)).map((d) => d.barcode)).toEqual(['A', 'B']);
    expect((await inventoryLogs(p, shop)).map((l) => l.barcode)).toEqual(['A', 'B']);
  });
});

describe('rule 4 and D15a: resending is idempotent', () => {
  it('the same request again: same counts, logs_written 0, no duplicate levels, daily rows or logs', async () => {
    const { shop, loc } = await setup('rule4');
    const req = body(
      shop,
      loc,
      [
        { barcode: 'A', on_hand_qty: 4 },
        { barcode: 'B', on_hand_qty: 0 },
        { barcode: 'NOPE', on_hand_qty: 1 },
      ],
      { inventory_as_of: AS_OF },
    );
    const first = await snapshot(p, req);
    expect(first.json).toMatchObject({ lines_processed: 3, lines_upserted: 2, lines_unresolved: 1, logs_written: 2 });
    const levelsBefore = await levelRows(p, shop);
    const dailyBefore = await dailyRows(p, shop);
    const second = await snapshot(p, req);
    expect(second.status, second.text).toBe(200);
    expect(second.json).toEqual({ ...first.json, logs_written: 0 });
    expect(await levelRows(p, shop)).toHaveLength(2);
    expect((await levelRows(p, shop)).map(qty)).toEqual(levelsBefore.map(qty));
    expect(await dailyRows(p, shop)).toEqual(dailyBefore);
    expect(await countLogs(p, shop)).toBe(2);
    // A third time without inventory_as_of (defaults to now, newer): still no change, no log.
    const third = await snapshot(p, { ...req, inventory_as_of: undefined });
    expect(third.json).toMatchObject({ lines_upserted: 2, logs_written: 0, lines_stale: 0 });
    expect(await countLogs(p, shop)).toBe(2);
  });
});

describe('defaults and D15 scope', () => {
  it('available_qty defaults to on_hand_qty; allocated, reserved and incoming default to 0 (overwriting older values)', async () => {
    const { shop, loc } = await setup('defaults');
    await snapshot(
      p,
      body(shop, loc, [{ barcode: 'A', on_hand_qty: 9, available_qty: 2, allocated_qty: 3, reserved_qty: 4, incoming_qty: 5 }], {
        inventory_as_of: minutes(-30),
      }),
    );
    expect(qty(await level(p, shop, 'A', loc))).toEqual(Q(9, 2, 3, 4, 5));
    const r = await snapshot(p, body(shop, loc, [{ barcode: 'A', on_hand_qty: 7 }], { inventory_as_of: minutes(-20) }));
    expect(r.json).toMatchObject({ lines_upserted: 1, logs_written: 1 });
    expect(qty(await level(p, shop, 'A', loc))).toEqual(Q(7, 7, 0, 0, 0));
    const log = (await inventoryLogs(p, shop)).at(-1)!;
    expect(log.changed_fields).toEqual(['on_hand_qty', 'available_qty', 'allocated_qty', 'reserved_qty', 'incoming_qty']);
  });

  it('D15: products at the location that are absent from lines are left unchanged (level, daily row, no log)', async () => {
    const { shop, loc } = await setup('d15');
    await snapshot(
      p,
      body(
        shop,
        loc,
        [
          { barcode: 'A', on_hand_qty: 1 },
          { barcode: 'B', on_hand_qty: 2 },
          { barcode: 'C', on_hand_qty: 3 },
        ],
        { inventory_as_of: minutes(-30) },
      ),
    );
    const before = await levelRows(p, shop);
    const dailyBefore = await dailyRows(p, shop);
    const r = await snapshot(p, body(shop, loc, [{ barcode: 'B', on_hand_qty: 20 }], { inventory_as_of: minutes(-10) }));
    expect(r.json).toMatchObject({ lines_processed: 1, lines_upserted: 1, logs_written: 1 });
    const after = await levelRows(p, shop);
    expect(after.map((l) => [l.barcode, l.on_hand_qty])).toEqual([
      ['A', 1],
      ['B', 20],
      ['C', 3],
    ]);
    for (const b of ['A', 'C']) {
      const x = before.find((l) => l.barcode === b)!;
      const y = after.find((l) => l.barcode === b)!;
      expect(y).toEqual(x); // not even updated_at / inventory_as_of moved
    }
    const dailyAfter = await dailyRows(p, shop);
    expect(dailyAfter.filter((d) => d.barcode !== 'B')).toEqual(dailyBefore.filter((d) => d.barcode !== 'B'));
    expect((await inventoryLogs(p, shop)).filter((l) => l.barcode !== 'B')).toHaveLength(2);
  });
});

describe('D15b: late absolute writes do not win', () => {
  it("a snapshot older than the level's last absolute write is reported in stale and not applied", async () => {
    const { shop, loc } = await setup('stale');
    const newer = '2026-11-20T16:30:00.000Z';
    const older = '2026-11-20T16:00:00.000Z';
    await snapshot(p, body(shop, loc, [{ barcode: 'A', on_hand_qty: 50 }], { inventory_as_of: newer }));
    const dailyBefore = await dailyRows(p, shop);
    const r = await snapshot(
      p,
      body(
        shop,
        loc,
        [
          { barcode: 'A', on_hand_qty: 1 },
          { barcode: 'B', on_hand_qty: 2 },
        ],
        { inventory_as_of: older },
      ),
    );
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({
      ok: true,
      shop,
      location_id: loc,
      lines_processed: 2,
      lines_upserted: 1,
      lines_unresolved: 0,
      logs_written: 1,
      lines_stale: 1,
      unresolved: [],
      stale: [{ barcode: 'A', location_id: loc, stored_as_of: expect.any(String) }],
    });
    expect(Date.parse(r.json.stale[0].stored_as_of)).toBe(Date.parse(newer));
    const a = await level(p, shop, 'A', loc);
    expect(a?.on_hand_qty).toBe(50);
    expect(a?.inventory_as_of?.toISOString()).toBe(newer);
    // B had no level: it is applied with the older as-of.
    expect((await level(p, shop, 'B', loc))?.on_hand_qty).toBe(2);
    // A's daily row is the newer one; no log for A.
    const dailyA = (await dailyRows(p, shop)).filter((d) => d.barcode === 'A');
    expect(dailyA).toEqual(dailyBefore.filter((d) => d.barcode === 'A'));
    expect((await inventoryLogs(p, shop, { barcode: 'A' })).length).toBe(1);
  });

  it('a reordered burst converges to the newest picture whatever order it lands in', async () => {
    const { shop, loc } = await setup('converge');
    const at = (m: number) => `2026-11-21T0${m}:00:00.000Z`;
    for (const [m, q] of [
      [3, 30],
      [1, 10],
      [4, 40],
      [2, 20],
    ] as const) {
      await snapshot(p, body(shop, loc, [{ barcode: 'A', on_hand_qty: q }], { inventory_as_of: at(m) }));
    }
    expect((await level(p, shop, 'A', loc))?.on_hand_qty).toBe(40);
    expect((await inventoryLogs(p, shop)).map((l) => l.after_data.on_hand_qty)).toEqual([30, 40]);
  });

  it('a burst of snapshots sent concurrently, over two gateways, converges to the one with the newest inventory_as_of', async () => {
    const { shop, loc } = await setup('burst');
    const second = p.gateways.length > 1 ? p.gateways[1]! : await p.startGateway();
    const asOf = (m: number) => new Date(Date.parse('2026-11-21T03:00:00.000Z') + m * 60_000).toISOString();
    const order = [5, 2, 9, 0, 7, 3, 8, 1, 6, 4];
    const replies = await Promise.all(
      order.map((m, i) =>
        post(
          `${i % 2 ? `http://127.0.0.1:${second.port}` : p.url()}/api/ingest/inventory-snapshot`,
          body(
            shop,
            loc,
            [
              { barcode: 'A', on_hand_qty: 100 + m },
              { barcode: 'B', on_hand_qty: 200 + m },
            ],
            { inventory_as_of: asOf(m) },
          ),
          ING,
        ),
      ),
    );
    for (const r of replies) expect(r.status, r.text).toBe(200);
    expect(qty(await level(p, shop, 'A', loc))).toEqual(Q(109, 109));
    expect(qty(await level(p, shop, 'B', loc))).toEqual(Q(209, 209));
    expect((await level(p, shop, 'A', loc))?.inventory_as_of?.toISOString()).toBe(asOf(9));
    expect((await dailyRows(p, shop)).map((d) => [d.barcode, d.on_hand_qty])).toEqual([
      ['A', 109],
      ['B', 209],
    ]);
    // Every stale line was reported, every applied line was counted.
    const applied = replies.reduce((s, r) => s + r.json.lines_upserted, 0);
    const stale = replies.reduce((s, r) => s + r.json.lines_stale, 0);
    expect(applied + stale).toBe(20);
  });

  it('Prefer: respond-async answers 202; the stored result is the body the synchronous answer would have had (D6)', async () => {
    const { shop, loc } = await setup('async');
    const r = await post(`${p.url()}/api/ingest/inventory-snapshot`, body(shop, loc, [{ barcode: 'A', on_hand_qty: 2 }]), {
      ...ING,
      Prefer: 'respond-async',
    });
    expect(r.status, r.text).toBe(202);
    expect(r.json).toMatchObject({ ok: true, status: 'accepted' });
    const done = await waitFor(async () => {
      const g = await get(`${p.url()}${r.json.result_url}`, ING);
      return g.status === 200 ? g : null;
    });
    expect(done.json).toEqual({
      ok: true,
      shop,
      location_id: loc,
      lines_processed: 1,
      lines_upserted: 1,
      lines_unresolved: 0,
      logs_written: 1,
      lines_stale: 0,
      unresolved: [],
      stale: [],
    });
  });
});

describe('size and the business range', () => {
  it('a 10,000-line snapshot is accepted (200) and written in full (10,001 lines: services/gateway/src/routes/inventoryEdge.unit.test.ts)', async () => {
    const shop = uniqueShop('big');
    const loc = await newLocation(p, shop, 'Big store');
    const barcodes = Array.from({ length: 10_000 }, (_, i) => `49${String(i).padStart(11, '0')}`);
    await newProducts(p, shop, barcodes);
    const lines = barcodes.map((barcode, i) => ({ barcode, on_hand_qty: i % 50, allocated_qty: i % 3 }));
    const started = performance.now();
    const r = await snapshot(p, body(shop, loc, lines));
    const ms = Math.round(performance.now() - started);
    console.info(`[timing] 10,000-line inventory snapshot answered in ${ms} ms`);
    expect(r.status, r.text.slice(0, 300)).toBe(200);
    expect(r.json).toMatchObject({ ok: true, lines_processed: 10_000, lines_upserted: 10_000, lines_unresolved: 0, logs_written: 10_000 });
    const counts = await p.db.query(
      `SELECT (SELECT count(*)::int FROM agent_read.inventory_levels WHERE shop = $1) AS levels,
              (SELECT count(*)::int FROM agent_read.inventory_daily_snapshots WHERE shop = $1) AS daily,
              (SELECT count(*)::int FROM agent_read.inventory_update_logs WHERE shop = $1) AS logs,
              (SELECT sum(on_hand_qty)::int FROM agent_read.inventory_levels WHERE shop = $1) AS on_hand`,
      [shop],
    );
    expect(counts.rows[0]).toEqual({ levels: 10_000, daily: 10_000, logs: 10_000, on_hand: lines.reduce((s, l) => s + l.on_hand_qty, 0) });
  }, 120_000);

  it('an inventory_as_of of 2000-01-01T00:00:00Z, the start of the business range, is accepted and lands on its business date (D16)', async () => {
    const { shop, loc } = await setup('old');
    const r = await snapshot(p, body(shop, loc, [{ barcode: 'A', on_hand_qty: 1 }], { inventory_as_of: '2000-01-01T00:00:00Z' }));
    expect(r.status, r.text).toBe(200);
    expect((await dailyRows(p, shop)).map((d) => d.snapshot_date)).toEqual(['2000-01-01']);
    // The refusals before the range (422, in UTC whatever the offset): services/gateway/src/routes/inventoryEdge.unit.test.ts.
  });
});

describe('D6a: lines are applied in order', () => {
  it('a barcode repeated in one snapshot: the last value wins and each change is logged, as if sent one by one', async () => {
    const { shop, loc } = await setup('d6a');
    const r = await snapshot(
      p,
      body(
        shop,
        loc,
        [
          { barcode: 'A', on_hand_qty: 5 },
          { barcode: 'A', on_hand_qty: 3 },
          { barcode: 'A', on_hand_qty: 3 },
          { barcode: 'B', on_hand_qty: 1 },
          { barcode: 'A', on_hand_qty: 8, allocated_qty: 1 },
        ],
        { inventory_as_of: AS_OF },
      ),
    );
    expect(r.status, r.text).toBe(200);
    expect(r.json).toMatchObject({ lines_processed: 5, lines_upserted: 5, lines_unresolved: 0, logs_written: 4, lines_stale: 0 });
    expect(qty(await level(p, shop, 'A', loc))).toEqual(Q(8, 8, 1));
    const logs = await inventoryLogs(p, shop, { barcode: 'A' });
    expect(logs.map((l) => [l.before_data?.on_hand_qty ?? null, l.after_data.on_hand_qty])).toEqual([
      [null, 5],
      [5, 3],
      [3, 8],
    ]);
    const daily = await dailyRows(p, shop);
    expect(daily.map((d) => [d.barcode, d.on_hand_qty, d.allocated_qty])).toEqual([
      ['A', 8, 1],
      ['B', 1, 0],
    ]);
  });
});
