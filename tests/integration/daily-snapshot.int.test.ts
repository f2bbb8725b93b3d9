import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { v7 as uuidv7 } from 'uuid';
import { createCommandLog, createKafka, createMessageSink, type CommandLog, type MessageSink } from '@ingest/kafka';
import { post, startPipeline, waitFor, type TestPipeline } from '../support/pipeline.ts';
import {
  ING,
  INVENTORY_ENV,
  dailyRows,
  levelRows,
  levels,
  newProducts,
  registerLocations,
  snapshot,
  uniqueShop,
  type DailyRowRead,
} from '../support/inventory.ts';

// D16, the daily job at the projector: an `inventory.daily_snapshot` command (per shop, per
// date, idempotent) copies every level of the shop into sot.inventory_daily_snapshots with source
// 'daily_job', without overwriting rows the snapshot endpoint wrote for that date.
let p: TestPipeline;
let sink: MessageSink;
let commandLog: CommandLog;
beforeAll(async () => {
  p = await startPipeline({ env: INVENTORY_ENV });
  sink = await createMessageSink(createKafka({ brokers: p.brokers, clientId: `test-${p.id}-scheduler` }));
  commandLog = createCommandLog(sink, p.topics.commands);
});
afterAll(async () => {
  await sink?.close();
  await p?.stop();
});

interface StoredResult {
  status_code: number;
  body: Record<string, unknown>;
}

/** Appends the job's command as the scheduler would and waits for the projector's stored result. */
async function runDailyJob(shop: string, snapshotDate: string): Promise<{ commandId: string; result: StoredResult }> {
  const commandId = uuidv7();
  await commandLog.appendCommand({
    command_id: commandId,
    kind: 'inventory.daily_snapshot',
    shop,
    received_at: new Date().toISOString(),
    source: { endpoint: 'scheduler' },
    payload: { snapshot_date: snapshotDate },
  });
  const result = await waitFor(
    async () => {
      const { rows } = await p.db.query<StoredResult>('SELECT status_code, body FROM agent_runtime.command_results WHERE command_id = $1', [
        commandId,
      ]);
      return rows[0];
    },
    20000,
    `result of daily_snapshot ${commandId}`,
  );
  return { commandId, result };
}

const DATE = '2026-11-21';
const previousDay = (date: string): string => new Date(Date.parse(`${date}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10);
// 2026-11-21T01:00Z is 10:00 on 2026-11-21 in Asia/Tokyo.
const SNAPSHOT_AS_OF = '2026-11-21T01:00:00.000Z';

const view = (rows: DailyRowRead[]) =>
  rows.map((r) => ({
    d: r.snapshot_date,
    b: r.barcode,
    l: r.location_id,
    src: r.source,
    on: r.on_hand_qty,
    av: r.available_qty,
    al: r.allocated_qty,
    re: r.reserved_qty,
    in: r.incoming_qty,
  }));

describe('inventory.daily_snapshot (D16)', () => {
  let shop: string;
  let other: string;
  let l1: string;
  let l2: string;
  beforeAll(async () => {
    shop = uniqueShop('daily');
    other = uniqueShop('daily-other');
    const r = await registerLocations(p, shop, [{ name: 'Store' }, { name: 'Warehouse' }]);
    l1 = r.json.locations[0].location_id;
    l2 = r.json.locations[1].location_id;
    const o = await registerLocations(p, other, [{ name: 'Elsewhere' }]);
    await newProducts(p, shop, ['A', 'B', 'C']);
    await newProducts(p, other, ['A']);
    // Levels written by endpoint 3 (no daily rows of their own).
    const w = await levels(p, {
      shop,
      source_system: 'wms',
      mode: 'absolute',
      inventory_as_of: '2026-11-21T00:00:00.000Z',
      lines: [
        { barcode: 'A', location_id: l1, on_hand_qty: 10, available_qty: 9, allocated_qty: 1 },
        { barcode: 'B', location_id: l1, on_hand_qty: 4, available_qty: 4, incoming_qty: 2 },
      ],
    });
    expect(w.status, w.text).toBe(200);
    // The snapshot endpoint writes its own rows for DATE at l2 ...
    const s = await snapshot(p, {
      shop,
      source_system: 'pos',
      location_id: l2,
      inventory_as_of: SNAPSHOT_AS_OF,
      lines: [
        { barcode: 'A', on_hand_qty: 9 },
        { barcode: 'C', on_hand_qty: 5, reserved_qty: 1 },
      ],
    });
    expect(s.status, s.text).toBe(200);
    // ... and the level of A at l2 changes afterwards (endpoint 3): the daily row must keep the snapshot's values.
    const later = await levels(p, {
      shop,
      source_system: 'wms',
      mode: 'delta',
      lines: [{ barcode: 'A', location_id: l2, on_hand_delta: -5, available_delta: -5 }],
    });
    expect(later.status, later.text).toBe(200);
    await snapshot(p, {
      shop: other,
      source_system: 'pos',
      location_id: o.json.locations[0].location_id,
      inventory_as_of: '2026-11-20T01:00:00.000Z',
      lines: [{ barcode: 'A', on_hand_qty: 1 }],
    });
  });

  it('copies every level of the shop with source daily_job and leaves the rows the snapshot endpoint wrote for that date', async () => {
    const before = await dailyRows(p, shop);
    expect(view(before).map((r) => [r.d, r.b, r.src])).toEqual([
      [DATE, 'A', 'snapshot'],
      [DATE, 'C', 'snapshot'],
    ]);
    const otherBefore = await dailyRows(p, other);

    const { result } = await runDailyJob(shop, DATE);
    expect(result.status_code).toBe(200);
    expect(result.body).toMatchObject({ ok: true, shop, snapshot_date: DATE, rows_written: 2 });

    const lv = await levelRows(p, shop);
    expect(lv).toHaveLength(4);
    const after = await dailyRows(p, shop);
    expect(after).toHaveLength(4);
    for (const l of lv) {
      const row = after.find((d) => d.barcode === l.barcode && d.location_id === l.location_id);
      expect(row, `${l.barcode}@${l.location_id}`).toBeDefined();
      expect(row!.snapshot_date).toBe(DATE);
      expect(row!.product_id).toBe(l.product_id);
      if (l.location_id === l2) {
        // Written by the snapshot endpoint: untouched.
        expect(row).toEqual(before.find((d) => d.barcode === l.barcode && d.location_id === l2));
        expect(row!.source).toBe('snapshot');
      } else {
        expect(row!.source).toBe('daily_job');
        expect([row!.on_hand_qty, row!.available_qty, row!.allocated_qty, row!.reserved_qty, row!.incoming_qty]).toEqual([
          l.on_hand_qty,
          l.available_qty,
          l.allocated_qty,
          l.reserved_qty,
          l.incoming_qty,
        ]);
      }
    }
    // The snapshot's A@l2 row keeps on_hand 9 though the level is now 4.
    expect(after.find((d) => d.barcode === 'A' && d.location_id === l2)?.on_hand_qty).toBe(9);
    expect(lv.find((l) => l.barcode === 'A' && l.location_id === l2)?.on_hand_qty).toBe(4);
    // Other shops are not copied.
    expect(await dailyRows(p, other)).toEqual(otherBefore);
  });

  it('a second command for the same shop and date writes nothing more, even after the levels changed', async () => {
    const before = await dailyRows(p, shop);
    const moved = await levels(p, {
      shop,
      source_system: 'wms',
      mode: 'delta',
      lines: [{ barcode: 'B', location_id: l1, on_hand_delta: 100 }],
    });
    expect(moved.status, moved.text).toBe(200);
    const { result } = await runDailyJob(shop, DATE);
    expect(result.status_code).toBe(200);
    expect(result.body).toMatchObject({ ok: true, shop, snapshot_date: DATE, rows_written: 0 });
    expect(await dailyRows(p, shop)).toEqual(before);
    const runs = await p.db.query(
      'SELECT count(*)::int AS n FROM agent_runtime.daily_snapshot_runs WHERE shop = $1 AND snapshot_date = $2',
      [shop, DATE],
    );
    expect(runs.rows[0].n).toBe(1);
  });

  it('another date copies every level again, for that date only', async () => {
    const { result } = await runDailyJob(shop, '2026-11-22');
    expect(result.body).toMatchObject({ ok: true, rows_written: 4 });
    const rows = await dailyRows(p, shop);
    const next = rows.filter((r) => r.snapshot_date === '2026-11-22');
    expect(next).toHaveLength(4);
    expect(next.every((r) => r.source === 'daily_job')).toBe(true);
    expect(next.find((r) => r.barcode === 'B' && r.location_id === l1)?.on_hand_qty).toBe(104);
    expect(rows.filter((r) => r.snapshot_date === DATE)).toHaveLength(4);
  });

  it('a shop without levels: the job succeeds and writes nothing', async () => {
    const empty = uniqueShop('daily-empty');
    const { result } = await runDailyJob(empty, DATE);
    expect(result.status_code).toBe(200);
    expect(result.body).toMatchObject({ ok: true, shop: empty, rows_written: 0 });
    expect(await dailyRows(p, empty)).toEqual([]);
  });

  it("the snapshot endpoint still owns its day after the job ran: a later snapshot overwrites the job's row for that date", async () => {
    const r = await snapshot(p, {
      shop,
      source_system: 'pos',
      location_id: l1,
      inventory_as_of: '2026-11-21T05:00:00.000Z',
      lines: [{ barcode: 'A', on_hand_qty: 3 }],
    });
    expect(r.status, r.text).toBe(200);
    const row = (await dailyRows(p, shop)).find((d) => d.snapshot_date === DATE && d.barcode === 'A' && d.location_id === l1);
    expect(row).toMatchObject({ source: 'snapshot', on_hand_qty: 3, available_qty: 3 });
  });
  it('POST /api/admin/daily-snapshot appends the same command and answers its result', async () => {
    const r = await post(`${p.url()}/api/admin/daily-snapshot`, { shop, snapshot_date: '2026-11-19' }, ING);
    expect(r.status, r.text).toBe(200);
    expect(r.json).toMatchObject({ ok: true, shop, snapshot_date: '2026-11-19', rows_written: 4 });
    const again = await post(`${p.url()}/api/admin/daily-snapshot`, { shop, snapshot_date: '2026-11-19' }, ING);
    expect(again.status, again.text).toBe(200);
    expect(again.json).toMatchObject({ ok: true, rows_written: 0 });
    expect((await dailyRows(p, shop)).filter((d) => d.snapshot_date === '2026-11-19' && d.source === 'daily_job')).toHaveLength(4);
  });

  it('the scheduler appends one command per shop with levels for the business day that ended, once', async () => {
    const yesterday = previousDay(
      new Intl.DateTimeFormat('en-CA', { timeZone: 'Asia/Tokyo', year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date()),
    );
    const scheduler = p.projector!.scheduler!;
    const due = await p.db.query(
      `SELECT DISTINCT shop FROM sot.inventory_levels l
        WHERE NOT EXISTS (SELECT 1 FROM agent_runtime.daily_snapshot_runs r WHERE r.shop = l.shop AND r.snapshot_date = $1)`,
      [yesterday],
    );
    expect(due.rows.length).toBeGreaterThan(0);
    expect(await scheduler.tick()).toBe(due.rows.length);
    await waitFor(
      async () => {
        const { rows } = await p.db.query(
          'SELECT count(*)::int AS n FROM agent_runtime.daily_snapshot_runs WHERE shop = ANY($1) AND snapshot_date = $2',
          [[shop, other], yesterday],
        );
        return rows[0].n === 2;
      },
      20000,
      'the scheduled runs',
    );
    const mine = (await dailyRows(p, shop)).filter((d) => d.snapshot_date === yesterday);
    expect(mine.length).toBe((await levelRows(p, shop)).length);
    // The other shop's snapshot row of that date (written by the endpoint) is kept.
    const theirs = (await dailyRows(p, other)).filter((d) => d.snapshot_date === yesterday);
    if (yesterday === '2026-11-20') expect(theirs.map((d) => d.source)).toEqual(['snapshot']);
    expect(await scheduler.tick()).toBe(0);
  });
});
