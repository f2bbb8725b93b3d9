import { describe, expect, it } from 'vitest';
import { decideSnapshot } from './decideSnapshot.ts';
import type { InventorySnapshotCommand, SnapshotLine } from './inventoryCommand.ts';
import { LOC, PA, T0, T1, level, meta, state } from './fixtures.ts';

const snapshot = (lines: SnapshotLine[], over: Partial<InventorySnapshotCommand> = {}): InventorySnapshotCommand => ({
  ...meta(),
  kind: 'inventory.snapshot',
  payload: { location: { location_id: LOC }, snapshot_date: '2026-11-02', lines },
  ...over,
});

describe('decideSnapshot (endpoint 4)', () => {
  it('given no level, when a line arrives, then the level and the day row are written with the spec defaults and logged', () => {
    const plan = decideSnapshot(state(), snapshot([{ barcode: 'A', on_hand_qty: 5 }]));
    expect(plan.levels[0]).toMatchObject({ on_hand_qty: 5, available_qty: 5, allocated_qty: 0, reserved_qty: 0, incoming_qty: 0, last_absolute_as_of: T1 });
    expect(plan.daily[0]).toMatchObject({ snapshot_date: '2026-11-02', source: 'snapshot', on_hand_qty: 5 });
    expect(plan.logs.map((l) => [l.change_type, l.change_source])).toEqual([['snapshot', 'pos']]);
    expect(plan.reply.body).toMatchObject({ lines_processed: 1, lines_upserted: 1, logs_written: 1, lines_unresolved: 0 });
  });

  it('given the same values, when resent, then lines_upserted counts it (D15a) but no log is written', () => {
    const plan = decideSnapshot(state([level(PA, 'A', { on_hand_qty: 5, available_qty: 5 })]), snapshot([{ barcode: 'A', on_hand_qty: 5 }]));
    expect(plan.reply.body).toMatchObject({ lines_upserted: 1, logs_written: 0 });
    expect(plan.logs).toEqual([]);
    expect(plan.daily).toHaveLength(1);
  });

  it('given an unknown barcode, then the line is skipped as product_not_found', () => {
    const plan = decideSnapshot(state(), snapshot([{ barcode: 'ZZZ', on_hand_qty: 1 }]));
    expect(plan.reply.body).toMatchObject({ lines_unresolved: 1, unresolved: [{ barcode: 'ZZZ', reason: 'product_not_found' }], lines_upserted: 0 });
  });

  it('given an unknown location, then 422 location_unresolved; given a shared identifier, then 422 location_ambiguous (D14)', () => {
    const unknown = decideSnapshot(state(), snapshot([], { payload: { location: { location_id: 'nope' }, snapshot_date: '2026-11-02', lines: [] } }));
    expect(unknown.reply).toMatchObject({ status: 422, body: { ok: false, error_kind: 'location_unresolved' } });
    const dup = decideSnapshot(state(), snapshot([], { payload: { location: { location: { identifier_type: 'pos', identifier_value: 'DUP' } }, snapshot_date: '2026-11-02', lines: [] } }));
    expect(dup.reply).toMatchObject({ status: 422, body: { error_kind: 'location_ambiguous' } });
  });

  it('given a newer absolute write, when an older snapshot arrives, then it is stale and not applied (D15b)', () => {
    const plan = decideSnapshot(state([level(PA, 'A', { on_hand_qty: 9 }, { last_absolute_as_of: T1 })]), snapshot([{ barcode: 'A', on_hand_qty: 1 }], { inventory_as_of: T0 }));
    expect(plan.levels).toEqual([]);
    expect(plan.daily).toEqual([]);
    expect(plan.reply.body).toMatchObject({ lines_stale: 1, stale: [{ barcode: 'A', location_id: LOC, stored_as_of: T1 }], lines_upserted: 0 });
  });

  it('given stock, when the snapshot sets available to 0, then one stock_zero event with seq 1 (D18)', () => {
    const plan = decideSnapshot(state([level(PA, 'A', { on_hand_qty: 3, available_qty: 3 })]), snapshot([{ barcode: 'A', on_hand_qty: 0 }]));
    expect(plan.events).toHaveLength(1);
    expect(plan.events[0]?.payload).toMatchObject({ event_type: 'stock_zero', previous_available_qty: 3, available_qty: 0, seq: 1, change_type: 'snapshot', occurred_at: T1 });
    expect(plan.levels[0]?.stock_event_seq).toBe(1);
  });

  it('given no level, when created at 0, then no stock event (never in stock, D18)', () => {
    expect(decideSnapshot(state(), snapshot([{ barcode: 'A', on_hand_qty: 0 }])).events).toEqual([]);
  });
});
