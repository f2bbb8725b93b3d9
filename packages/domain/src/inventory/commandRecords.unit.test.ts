import { describe, expect, it } from 'vitest';
import { logId } from '../ids.ts';
import { decideAvailable } from './decideAvailable.ts';
import { decideLevels } from './decideLevels.ts';
import type { InventoryLevelsCommand } from './inventoryCommand.ts';
import { LOC, LOC2, PA, PB, level, meta, state } from '../../testing/inventory.ts';

// D3/D5: within one command every update-log record has its own log_seq (its order in the
// command) and its own derived log_id, and every stock event its own derived event_id, so the
// relay publishes them in order and a consumer dedupes redeliveries without merging two records.

const COMMAND = '01900000-0000-7000-8000-000000000001';
const levels = (lines: InventoryLevelsCommand['payload']['lines']): InventoryLevelsCommand => ({
  ...meta(),
  kind: 'inventory.levels',
  payload: { mode: 'delta', lines },
});

describe('the records of one inventory command (D3, D5)', () => {
  it('its logs are numbered 0, 1, 2 in line order, each with the log id derived from (command, n)', () => {
    const plan = decideLevels(
      state([level(PA, 'A', { on_hand_qty: 1 })]),
      levels([
        { barcode: 'A', location: { location_id: LOC }, delta: { on_hand_qty: 1 } },
        { barcode: 'B', location: { location_id: LOC }, delta: { on_hand_qty: 1 } },
        { barcode: 'A', location: { location_id: LOC2 }, delta: { on_hand_qty: 1 } },
      ]),
    );
    expect(plan.logs.map((l) => [l.log_seq, l.log_id])).toEqual([
      [0, logId(COMMAND, 0)],
      [1, logId(COMMAND, 1)],
      [2, logId(COMMAND, 2)],
    ]);
  });

  it('two levels emptied by one command emit two stock_zero events with distinct ids', () => {
    const plan = decideAvailable(state([level(PA, 'A', { available_qty: 1 }), level(PB, 'B', { available_qty: 2 })]), {
      ...meta(),
      kind: 'inventory.available',
      payload: {
        mode: 'absolute',
        location: { location_id: LOC },
        lines: [
          { barcode: 'A', available_qty: 0 },
          { barcode: 'B', available_qty: 0 },
        ],
      },
    });
    const ids = plan.events.map((e) => e.event_id);
    expect(ids).toHaveLength(2);
    expect(new Set(ids).size).toBe(2);
    expect(plan.logs.map((l) => l.log_seq)).toEqual([0, 1]);
  });
});
