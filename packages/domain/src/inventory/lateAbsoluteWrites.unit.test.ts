import { describe, expect, it } from 'vitest';
import { decideAvailable } from './decideAvailable.ts';
import { decideLevels } from './decideLevels.ts';
import type { AvailableLine, InventoryAvailableCommand, InventoryLevelsCommand, LevelsLine } from './inventoryCommand.ts';
import { LOC, PA, T0, T1, level, meta, state } from '../../testing/inventory.ts';

// D15b: each level keeps the inventory_as_of of its last absolute write; an absolute write older
// than that is stale and not applied, deltas always apply. So an absolute write moves
// last_absolute_as_of (even when it changes no quantity) and a delta never does.

const T_LATE = '2026-11-01T12:00:00.000Z'; // between T0 and T1
const available = (mode: 'absolute' | 'delta', lines: AvailableLine[], asOf = T1): InventoryAvailableCommand => ({
  ...meta({ inventory_as_of: asOf }),
  kind: 'inventory.available',
  payload: { mode, location: { location_id: LOC }, lines },
});
const levels = (mode: 'absolute' | 'delta', lines: LevelsLine[], asOf = T1): InventoryLevelsCommand => ({
  ...meta({ source_system: 'wms', inventory_as_of: asOf }),
  kind: 'inventory.levels',
  payload: { mode, lines },
});
const at = { location: { location_id: LOC } };

describe('D15b on the levels endpoint (3): a late absolute set does not win', () => {
  it('given a level last set as of T1, when a set as of an earlier time arrives, then it is stale: reported, counted, not applied, not logged', () => {
    const plan = decideLevels(
      state([level(PA, 'A', { on_hand_qty: 5, available_qty: 5 }, { last_absolute_as_of: T1 })]),
      levels('absolute', [{ barcode: 'A', ...at, set: { on_hand_qty: 9 } }], T_LATE),
    );
    expect(plan.reply.body).toMatchObject({
      lines_processed: 1,
      lines_updated: 0,
      lines_unchanged: 0,
      lines_stale: 1,
      stale: [{ barcode: 'A', location_id: LOC, stored_as_of: T1 }],
    });
    expect(plan.levels).toEqual([]);
    expect(plan.logs).toEqual([]);
    expect(plan.events).toEqual([]);
  });

  it('given the same level, when a delta as of that earlier time arrives, then it applies (deltas always apply)', () => {
    const plan = decideLevels(
      state([level(PA, 'A', { on_hand_qty: 5 }, { last_absolute_as_of: T1 })]),
      levels('delta', [{ barcode: 'A', ...at, delta: { on_hand_qty: 2 } }], T_LATE),
    );
    expect(plan.levels[0]).toMatchObject({ on_hand_qty: 7, last_absolute_as_of: T1 });
    expect(plan.reply.body).toMatchObject({ lines_updated: 1, lines_stale: 0, stale: [] });
  });

  it('given a set as of exactly the stored time, then it is not late and applies', () => {
    const plan = decideLevels(
      state([level(PA, 'A', { on_hand_qty: 5 }, { last_absolute_as_of: T1 })]),
      levels('absolute', [{ barcode: 'A', ...at, set: { on_hand_qty: 6 } }], T1),
    );
    expect(plan.levels[0]).toMatchObject({ on_hand_qty: 6 });
    expect(plan.reply.body).toMatchObject({ lines_updated: 1, lines_stale: 0 });
  });
});

describe('D15b: last_absolute_as_of moves on an absolute write, never on a delta', () => {
  it('endpoint 5: available absolute moves it to the command`s inventory_as_of; a delta leaves it', () => {
    const stored = level(PA, 'A', { available_qty: 5 }, { last_absolute_as_of: T0 });
    expect(decideAvailable(state([stored]), available('absolute', [{ barcode: 'A', available_qty: 4 }])).levels[0]).toMatchObject({
      available_qty: 4,
      last_absolute_as_of: T1,
    });
    expect(decideAvailable(state([stored]), available('delta', [{ barcode: 'A', available_delta: -1 }])).levels[0]).toMatchObject({
      available_qty: 4,
      last_absolute_as_of: T0,
    });
  });

  it('endpoint 3: a set moves it; a delta leaves it', () => {
    const stored = level(PA, 'A', { on_hand_qty: 5 }, { last_absolute_as_of: T0 });
    expect(decideLevels(state([stored]), levels('absolute', [{ barcode: 'A', ...at, set: { on_hand_qty: 4 } }])).levels[0]).toMatchObject({
      on_hand_qty: 4,
      last_absolute_as_of: T1,
    });
    expect(decideLevels(state([stored]), levels('delta', [{ barcode: 'A', ...at, delta: { on_hand_qty: -1 } }])).levels[0]).toMatchObject({
      on_hand_qty: 4,
      last_absolute_as_of: T0,
    });
  });

  it('a level created by a delta has had no absolute write: null, so any later absolute applies', () => {
    expect(decideAvailable(state(), available('delta', [{ barcode: 'A', available_delta: 3 }])).levels[0]).toMatchObject({
      available_qty: 3,
      last_absolute_as_of: null,
    });
    expect(decideLevels(state(), levels('delta', [{ barcode: 'A', ...at, delta: { incoming_qty: 3 } }])).levels[0]).toMatchObject({
      incoming_qty: 3,
      last_absolute_as_of: null,
    });
  });

  it('an absolute write of the values already stored is still written, to move last_absolute_as_of (no log, counted unchanged)', () => {
    const stored = level(PA, 'A', { on_hand_qty: 5, available_qty: 5 }, { last_absolute_as_of: T0 });
    for (const plan of [
      decideAvailable(state([stored]), available('absolute', [{ barcode: 'A', available_qty: 5 }])),
      decideLevels(state([stored]), levels('absolute', [{ barcode: 'A', ...at, set: { on_hand_qty: 5 } }])),
    ]) {
      expect(plan.levels).toEqual([{ ...stored, last_absolute_as_of: T1 }]);
      expect(plan.logs).toEqual([]);
      expect(plan.reply.body).toMatchObject({ lines_updated: 0, lines_unchanged: 1 });
    }
  });

  it('a delta that changes nothing writes no row (it has no as-of to record)', () => {
    const stored = level(PA, 'A', { on_hand_qty: 5, available_qty: 0 }, { last_absolute_as_of: T0 });
    for (const plan of [
      decideAvailable(state([stored]), available('delta', [{ barcode: 'A', available_delta: 0 }])),
      decideLevels(state([stored]), levels('delta', [{ barcode: 'A', ...at, delta: { on_hand_qty: 0 } }])),
    ]) {
      expect(plan.levels).toEqual([]);
      expect(plan.logs).toEqual([]);
      expect(plan.reply.body).toMatchObject({ lines_updated: 0, lines_unchanged: 1 });
    }
  });
});
