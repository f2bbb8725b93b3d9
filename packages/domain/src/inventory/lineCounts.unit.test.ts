import { describe, expect, it } from 'vitest';
import { decideAvailable } from './decideAvailable.ts';
import { decideLevels } from './decideLevels.ts';
import { decideSnapshot } from './decideSnapshot.ts';
import type {
  AvailableLine,
  InventoryAvailableCommand,
  InventoryLevelsCommand,
  InventorySnapshotCommand,
  LevelsLine,
} from './inventoryCommand.ts';
import { LOC, LOC2, PA, PB, level, meta, state } from '../../testing/inventory.ts';

// The counts and item lists of endpoints 3, 4 and 5: lines_unchanged (D15a), lines_clamped and
// clamped only for a result outside 0..QTY_MAX (spec: endpoint 5, D17), stock_zero only for a move
// of available_qty to 0 (D18), and the spec's `{barcode, reason}` unresolved item of endpoints 4 and 5.

const available = (mode: 'absolute' | 'delta', lines: AvailableLine[]): InventoryAvailableCommand => ({
  ...meta(),
  kind: 'inventory.available',
  payload: { mode, location: { location_id: LOC }, lines },
});
const levels = (mode: 'absolute' | 'delta', lines: LevelsLine[]): InventoryLevelsCommand => ({
  ...meta({ source_system: 'wms' }),
  kind: 'inventory.levels',
  payload: { mode, lines },
});
const at = (location_id = LOC) => ({ location: { location_id } });

describe('D15a on the levels endpoint (3): a line that changes nothing counts in lines_unchanged', () => {
  it('given a level, when the same values are set again, then lines_updated 0, lines_unchanged 1 and no log', () => {
    const plan = decideLevels(
      state([level(PA, 'A', { on_hand_qty: 7, available_qty: 5 })]),
      levels('absolute', [
        { barcode: 'A', ...at(), set: { on_hand_qty: 7, available_qty: 5 } },
        { barcode: 'B', ...at(), set: { on_hand_qty: 1 } },
      ]),
    );
    expect(plan.reply.body).toMatchObject({ lines_processed: 2, lines_updated: 1, lines_unchanged: 1 });
    expect(plan.logs.map((l) => l.barcode)).toEqual(['B']);
  });
});

describe('a delta whose result stays within 0..QTY_MAX is not clamped (spec: endpoint 5; D17)', () => {
  it('endpoint 5: lines_clamped 0 and clamped empty, down to exactly 0 included', () => {
    const plan = decideAvailable(
      state([level(PA, 'A', { available_qty: 5 }), level(PB, 'B', { available_qty: 2 })]),
      available('delta', [
        { barcode: 'A', available_delta: 3 },
        { barcode: 'B', available_delta: -2 },
      ]),
    );
    expect(plan.levels.map((l) => l.available_qty)).toEqual([8, 0]);
    expect(plan.reply.body).toMatchObject({ lines_updated: 2, lines_clamped: 0, clamped: [] });
  });

  it('endpoint 3: lines_clamped 0 and clamped empty, down to exactly 0 included', () => {
    const plan = decideLevels(
      state([level(PA, 'A', { on_hand_qty: 5, available_qty: 2 })]),
      levels('delta', [{ barcode: 'A', ...at(), delta: { on_hand_qty: -5, available_qty: 1, incoming_qty: 4 } }]),
    );
    expect(plan.levels[0]).toMatchObject({ on_hand_qty: 0, available_qty: 3, incoming_qty: 4 });
    expect(plan.reply.body).toMatchObject({ lines_updated: 1, lines_clamped: 0, clamped: [] });
  });

  it('endpoint 3: of two lines only the clamped one counts', () => {
    const plan = decideLevels(
      state([level(PA, 'A', { on_hand_qty: 1 })]),
      levels('delta', [
        { barcode: 'A', ...at(), delta: { on_hand_qty: 1 } },
        { barcode: 'A', ...at(), delta: { on_hand_qty: -5 } },
      ]),
    );
    expect(plan.reply.body).toMatchObject({
      lines_clamped: 1,
      clamped: [{ barcode: 'A', location_id: LOC, field: 'on_hand_qty', computed: -3, set: 0 }],
    });
  });
});

describe('stock_zero of the levels endpoint lists only the lines that moved available_qty to 0 (D17, D18)', () => {
  it('given one level emptied, one restored from 0 and one merely changed, then only the emptied one is listed', () => {
    const plan = decideLevels(
      state([
        level(PA, 'A', { available_qty: 2 }),
        level(PB, 'B', { available_qty: 0 }, { stock_event_seq: 1 }),
        level(PA, 'A', { available_qty: 3 }, { location_id: LOC2 }),
      ]),
      levels('delta', [
        { barcode: 'A', ...at(), delta: { available_qty: -2 } },
        { barcode: 'B', ...at(), delta: { available_qty: 4 } },
        { barcode: 'A', ...at(LOC2), delta: { available_qty: 1 } },
      ]),
    );
    expect(plan.reply.body['stock_zero']).toEqual([{ barcode: 'A', location_id: LOC }]);
    expect(plan.events.map((e) => e.payload['event_type'])).toEqual(['stock_zero', 'stock_restored']);
  });
});

describe('the unresolved item of endpoints 4 and 5 is the spec`s {barcode, reason}: the request names the location', () => {
  it('endpoint 5', () => {
    const plan = decideAvailable(state(), available('absolute', [{ barcode: 'ZZ', available_qty: 1 }]));
    expect((plan.reply.body['unresolved'] as object[]).map((u) => Object.entries(u))).toEqual([
      [
        ['barcode', 'ZZ'],
        ['reason', 'product_not_found'],
      ],
    ]);
  });

  it('endpoint 4', () => {
    const snapshot: InventorySnapshotCommand = {
      ...meta(),
      kind: 'inventory.snapshot',
      payload: { location: { location_id: LOC }, snapshot_date: '2026-11-02', lines: [{ barcode: 'ZZ', on_hand_qty: 1 }] },
    };
    const plan = decideSnapshot(state(), snapshot);
    expect((plan.reply.body['unresolved'] as object[]).map((u) => Object.entries(u))).toEqual([
      [
        ['barcode', 'ZZ'],
        ['reason', 'product_not_found'],
      ],
    ]);
  });
});
