import { describe, expect, it } from 'vitest';
import { decideAvailable } from './decideAvailable.ts';
import { decideLevels } from './decideLevels.ts';
import type { InventoryAvailableCommand, InventoryLevelsCommand } from './inventoryCommand.ts';
import { LOC, PA, level, meta, state } from '../../testing/inventory.ts';

// D18: stock_restored is "a move from 0 back above 0"; a level that already had stock events and
// merely changes its positive available_qty emits nothing, and neither does one that stays at 0.

const restocked = level(PA, 'A', { available_qty: 3 }, { stock_event_seq: 2 });
const available = (available_delta: number): InventoryAvailableCommand => ({
  ...meta(),
  kind: 'inventory.available',
  payload: { mode: 'delta', location: { location_id: LOC }, lines: [{ barcode: 'A', available_delta }] },
});
const levels = (available_qty: number): InventoryLevelsCommand => ({
  ...meta(),
  kind: 'inventory.levels',
  payload: { mode: 'absolute', lines: [{ barcode: 'A', location: { location_id: LOC }, set: { available_qty } }] },
});

describe('D18: stock_restored only from 0', () => {
  it('given a level with past stock events at 3, when it goes to 5, then no event and its seq stays', () => {
    for (const plan of [decideAvailable(state([restocked]), available(2)), decideLevels(state([restocked]), levels(5))]) {
      expect(plan.levels[0]).toMatchObject({ available_qty: 5, stock_event_seq: 2 });
      expect(plan.events).toEqual([]);
    }
  });

  it('given a level with past stock events at 0, when it stays at 0, then no event', () => {
    const empty = level(PA, 'A', { available_qty: 0, on_hand_qty: 1 }, { stock_event_seq: 1 });
    const plan = decideLevels(state([empty]), {
      ...levels(0),
      payload: { mode: 'absolute', lines: [{ barcode: 'A', location: { location_id: LOC }, set: { on_hand_qty: 2 } }] },
    });
    expect(plan.levels[0]).toMatchObject({ available_qty: 0, on_hand_qty: 2, stock_event_seq: 1 });
    expect(plan.events).toEqual([]);
  });

  it('given a level with past stock events at 0, when it goes to 1, then stock_restored with the next seq', () => {
    const plan = decideAvailable(state([level(PA, 'A', { available_qty: 0 }, { stock_event_seq: 1 })]), available(1));
    expect(plan.events.map((e) => [e.payload['event_type'], e.payload['previous_available_qty'], e.payload['seq']])).toEqual([
      ['stock_restored', 0, 2],
    ]);
  });
});
