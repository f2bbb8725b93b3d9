import { describe, expect, it } from 'vitest';
import { decideSnapshot } from './decideSnapshot.ts';
import { dailyKey } from './dailyBook.ts';
import type { InventorySnapshotCommand, SnapshotLine } from './inventoryCommand.ts';
import type { DailyRow, InventoryPlan, InventoryState } from './inventoryState.ts';
import { C_FIRST, LOC, PA, PB, T0, T1, T_EARLY, dailyRow, level, meta, state, storedDaily } from '../../testing/inventory.ts';

/** The daily rows once the plan is applied: the stored ones, with the plan's rows written over them. */
const dailyAfter = (s: InventoryState, plan: InventoryPlan): Map<string, DailyRow> =>
  new Map([...s.daily, ...plan.daily.map((r) => [dailyKey(r.product_id, r.location_id, r.snapshot_date), r] as const)]);
const A_DAY = dailyKey(PA, LOC, '2026-11-02');
const C2 = '01900000-0000-7000-8000-000000000002';

const snapshot = (lines: SnapshotLine[], over: Partial<InventorySnapshotCommand> = {}): InventorySnapshotCommand => ({
  ...meta(),
  kind: 'inventory.snapshot',
  payload: { location: { location_id: LOC }, snapshot_date: '2026-11-02', lines },
  ...over,
});

describe('decideSnapshot (endpoint 4)', () => {
  it('given no level, when a line arrives, then the level and the day row are written with the spec defaults and logged', () => {
    const plan = decideSnapshot(state(), snapshot([{ barcode: 'A', on_hand_qty: 5 }]));
    expect(plan.levels[0]).toMatchObject({
      on_hand_qty: 5,
      available_qty: 5,
      allocated_qty: 0,
      reserved_qty: 0,
      incoming_qty: 0,
      last_absolute_as_of: T1,
    });
    expect(plan.daily[0]).toMatchObject({ snapshot_date: '2026-11-02', source: 'snapshot', on_hand_qty: 5 });
    expect(plan.logs.map((l) => [l.change_type, l.change_source])).toEqual([['snapshot', 'pos']]);
    expect(plan.reply.body).toMatchObject({ lines_processed: 1, lines_upserted: 1, logs_written: 1, lines_unresolved: 0 });
  });

  it('given the same values, when resent, then lines_upserted counts it (D15a) but no log is written', () => {
    const plan = decideSnapshot(
      state([level(PA, 'A', { on_hand_qty: 5, available_qty: 5 })]),
      snapshot([{ barcode: 'A', on_hand_qty: 5 }]),
    );
    expect(plan.reply.body).toMatchObject({ lines_upserted: 1, logs_written: 0 });
    expect(plan.logs).toEqual([]);
    expect(plan.daily).toHaveLength(1);
  });

  it('given an unknown barcode, then the line is skipped as product_not_found', () => {
    const plan = decideSnapshot(state(), snapshot([{ barcode: 'ZZZ', on_hand_qty: 1 }]));
    expect(plan.reply.body).toMatchObject({
      lines_unresolved: 1,
      unresolved: [{ barcode: 'ZZZ', reason: 'product_not_found' }],
      lines_upserted: 0,
    });
  });

  it('given an unknown location, then 422 location_unresolved; given a shared identifier, then 422 location_ambiguous (D14)', () => {
    const unknown = decideSnapshot(
      state(),
      snapshot([], { payload: { location: { location_id: 'nope' }, snapshot_date: '2026-11-02', lines: [] } }),
    );
    expect(unknown.reply).toMatchObject({ status: 422, body: { ok: false, error_kind: 'location_unresolved' } });
    const dup = decideSnapshot(
      state(),
      snapshot([], {
        payload: { location: { location: { identifier_type: 'pos', identifier_value: 'DUP' } }, snapshot_date: '2026-11-02', lines: [] },
      }),
    );
    expect(dup.reply).toMatchObject({ status: 422, body: { error_kind: 'location_ambiguous' } });
  });

  it('given a newer absolute write, when an older snapshot arrives, then it is stale and not applied (D15b)', () => {
    const plan = decideSnapshot(
      state([level(PA, 'A', { on_hand_qty: 9 }, { last_absolute_as_of: T1 })]),
      snapshot([{ barcode: 'A', on_hand_qty: 1 }], { inventory_as_of: T0 }),
    );
    expect(plan.levels).toEqual([]);
    expect(plan.daily).toEqual([]);
    expect(plan.reply.body).toMatchObject({
      lines_stale: 1,
      stale: [{ barcode: 'A', location_id: LOC, stored_as_of: T1 }],
      lines_upserted: 0,
    });
  });

  it('given stock, when the snapshot sets available to 0, then one stock_zero event with seq 1 (D18)', () => {
    const plan = decideSnapshot(
      state([level(PA, 'A', { on_hand_qty: 3, available_qty: 3 })]),
      snapshot([{ barcode: 'A', on_hand_qty: 0 }]),
    );
    expect(plan.events).toHaveLength(1);
    expect(plan.events[0]?.payload).toMatchObject({
      event_type: 'stock_zero',
      previous_available_qty: 3,
      available_qty: 0,
      seq: 1,
      change_type: 'snapshot',
      occurred_at: T1,
    });
    expect(plan.levels[0]?.stock_event_seq).toBe(1);
  });

  it('given no level, when created at 0, then no stock event (never in stock, D18)', () => {
    expect(decideSnapshot(state(), snapshot([{ barcode: 'A', on_hand_qty: 0 }])).events).toEqual([]);
  });
});

describe('D16b: the snapshot rewrites a daily row only when its quantities or source change', () => {
  /** The day so far: C_FIRST set A to 5/5 at T_EARLY, the level and the day's row alike. */
  const given = (row: DailyRow = dailyRow(PA, 'A', { on_hand_qty: 5, available_qty: 5 })): InventoryState =>
    state([level(PA, 'A', { on_hand_qty: 5, available_qty: 5 }, { last_absolute_as_of: T_EARLY })], { daily: storedDaily([row]) });

  it("D16b: given the day's row, when the same snapshot is resent, then the row is left as it is (inventory_as_of and command_id of the first)", () => {
    const s = given();
    const plan = decideSnapshot(s, snapshot([{ barcode: 'A', on_hand_qty: 5 }], { command_id: C2, inventory_as_of: T_EARLY }));
    expect(plan.daily).toEqual([]);
    expect(dailyAfter(s, plan).get(A_DAY)).toMatchObject({ on_hand_qty: 5, inventory_as_of: T_EARLY, command_id: C_FIRST });
    // D15a is about the level and the reply: the line still counts as upserted.
    expect(plan.reply.body).toMatchObject({ lines_upserted: 1, logs_written: 0, lines_stale: 0 });
  });

  it("D16b: given the day's row, when a later snapshot of that day has the same values, then the row is left as it is", () => {
    const s = given();
    const plan = decideSnapshot(
      s,
      snapshot([{ barcode: 'A', on_hand_qty: 5, available_qty: 5, allocated_qty: 0 }], { command_id: C2, inventory_as_of: T1 }),
    );
    expect(plan.daily).toEqual([]);
    expect(dailyAfter(s, plan).get(A_DAY)).toMatchObject({ inventory_as_of: T_EARLY, command_id: C_FIRST });
    // The level's last absolute write still moves forward (D15b), and the line counts (D15a).
    expect(plan.levels).toMatchObject([{ product_id: PA, last_absolute_as_of: T1 }]);
    expect(plan.reply.body).toMatchObject({ lines_processed: 1, lines_upserted: 1, logs_written: 0 });
  });

  it("D16b: given the day's row, when a later snapshot of that day changes a quantity, then the row is rewritten with its inventory_as_of and command_id", () => {
    const s = given();
    const plan = decideSnapshot(s, snapshot([{ barcode: 'A', on_hand_qty: 5, reserved_qty: 1 }], { command_id: C2, inventory_as_of: T1 }));
    expect(plan.daily).toEqual([
      dailyRow(PA, 'A', { on_hand_qty: 5, available_qty: 5, reserved_qty: 1 }, { inventory_as_of: T1, command_id: C2 }),
    ]);
    expect(dailyAfter(s, plan).get(A_DAY)).toMatchObject({ reserved_qty: 1, inventory_as_of: T1, command_id: C2 });
    expect(plan.reply.body).toMatchObject({ lines_upserted: 1, logs_written: 1 });
  });

  it("D16b: given the daily job's row of the day, when a snapshot brings the same quantities, then the change of source rewrites it (D16: the endpoint owns its day)", () => {
    const job = dailyRow(
      PA,
      'A',
      { on_hand_qty: 5, available_qty: 5 },
      { source: 'daily_job', inventory_as_of: T_EARLY, command_id: C_FIRST },
    );
    const plan = decideSnapshot(given(job), snapshot([{ barcode: 'A', on_hand_qty: 5 }], { command_id: C2, inventory_as_of: T1 }));
    expect(plan.daily).toEqual([
      dailyRow(PA, 'A', { on_hand_qty: 5, available_qty: 5 }, { source: 'snapshot', inventory_as_of: T1, command_id: C2 }),
    ]);
    // The level did not change: no log, yet the line counts (D15a).
    expect(plan.reply.body).toMatchObject({ lines_upserted: 1, logs_written: 0 });
  });

  it("D16b: given yesterday's row with the same values, when today's snapshot arrives, then today's row is written (one row per date)", () => {
    const yesterday = dailyRow(PA, 'A', { on_hand_qty: 5, available_qty: 5 }, { snapshot_date: '2026-11-01', inventory_as_of: T0 });
    const plan = decideSnapshot(given(yesterday), snapshot([{ barcode: 'A', on_hand_qty: 5 }], { command_id: C2, inventory_as_of: T1 }));
    expect(plan.daily).toEqual([dailyRow(PA, 'A', { on_hand_qty: 5, available_qty: 5 }, { inventory_as_of: T1, command_id: C2 })]);
  });

  it("D16b with D6a: given the day's row, when one snapshot moves A away and back, then the row is rewritten, as the two lines sent one by one would", () => {
    const s = given();
    const plan = decideSnapshot(
      s,
      snapshot(
        [
          { barcode: 'A', on_hand_qty: 7 },
          { barcode: 'A', on_hand_qty: 5 },
          { barcode: 'B', on_hand_qty: 1 },
          { barcode: 'B', on_hand_qty: 1 },
        ],
        { command_id: C2, inventory_as_of: T1 },
      ),
    );
    expect(plan.daily).toEqual([
      dailyRow(PA, 'A', { on_hand_qty: 5, available_qty: 5 }, { inventory_as_of: T1, command_id: C2 }),
      dailyRow(PB, 'B', { on_hand_qty: 1, available_qty: 1 }, { inventory_as_of: T1, command_id: C2 }),
    ]);
    expect(plan.reply.body).toMatchObject({ lines_upserted: 4, logs_written: 3 });
  });

  it("D16b with D15b: given a newer absolute write, when an older snapshot of the day brings other values, then it is stale and the day's row is left as it is", () => {
    const s = state([level(PA, 'A', { on_hand_qty: 5, available_qty: 5 }, { last_absolute_as_of: T1 })], {
      daily: storedDaily([dailyRow(PA, 'A', { on_hand_qty: 5, available_qty: 5 }, { inventory_as_of: T1 })]),
    });
    const plan = decideSnapshot(s, snapshot([{ barcode: 'A', on_hand_qty: 2 }], { command_id: C2, inventory_as_of: T_EARLY }));
    expect(plan.daily).toEqual([]);
    expect(plan.reply.body).toMatchObject({ lines_upserted: 0, lines_stale: 1 });
  });
});
