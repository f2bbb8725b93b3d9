import { describe, expect, it } from 'vitest';
import { decideLevels } from './decideLevels.ts';
import type { InventoryLevelsCommand, LevelsLine } from './inventoryCommand.ts';
import { LOC, LOC2, PA, level, meta, state } from '../../testing/inventory.ts';

const levels = (mode: 'absolute' | 'delta', lines: LevelsLine[], over: Partial<InventoryLevelsCommand> = {}): InventoryLevelsCommand => ({
  ...meta({ source_system: 'wms' }),
  kind: 'inventory.levels',
  payload: { mode, lines },
  ...over,
});

describe('decideLevels (endpoint 3, D17)', () => {
  it('given two locations, when absolute lines set some fields, then omitted fields stay and new rows start at 0', () => {
    const plan = decideLevels(
      state([level(PA, 'A', { on_hand_qty: 7, available_qty: 5, incoming_qty: 3 })]),
      levels('absolute', [
        { barcode: 'A', location: { location_id: LOC }, set: { available_qty: 4 } },
        { barcode: 'A', location: { location_id: LOC2 }, set: { on_hand_qty: 2 } },
      ]),
    );
    expect(plan.levels.find((l) => l.location_id === LOC)).toMatchObject({ on_hand_qty: 7, available_qty: 4, incoming_qty: 3 });
    expect(plan.levels.find((l) => l.location_id === LOC2)).toMatchObject({ on_hand_qty: 2, available_qty: 0, incoming_qty: 0 });
    expect(plan.logs.map((l) => [l.change_type, l.change_source])).toEqual([
      ['levels_set', 'wms'],
      ['levels_set', 'wms'],
    ]);
  });

  it('given deltas below zero, then each clamped field is reported with its location and the line counted once', () => {
    const plan = decideLevels(
      state([level(PA, 'A', { on_hand_qty: 1, reserved_qty: 1 })]),
      levels('delta', [{ barcode: 'A', location: { location_id: LOC }, delta: { on_hand_qty: -3, reserved_qty: -2, incoming_qty: 4 } }]),
    );
    expect(plan.levels[0]).toMatchObject({ on_hand_qty: 0, reserved_qty: 0, incoming_qty: 4 });
    expect(plan.reply.body).toMatchObject({
      lines_clamped: 1,
      clamped: [
        { barcode: 'A', location_id: LOC, field: 'on_hand_qty', computed: -2, set: 0 },
        { barcode: 'A', location_id: LOC, field: 'reserved_qty', computed: -1, set: 0 },
      ],
    });
    expect(plan.logs[0]?.change_type).toBe('levels_delta');
  });

  it('given 10,000 delta lines of +1e12 on one level, then it stops at 2^53 - 1 (exact in JavaScript, within bigint) and the overflowing lines are clamped', () => {
    const lines: LevelsLine[] = Array.from({ length: 10_000 }, () => ({
      barcode: 'A',
      location: { location_id: LOC },
      delta: { on_hand_qty: 1_000_000_000_000 },
    }));
    const plan = decideLevels(state([level(PA, 'A')]), levels('delta', lines));
    expect(plan.levels[0]?.on_hand_qty).toBe(Number.MAX_SAFE_INTEGER);
    const body = plan.reply.body as { lines_clamped: number; clamped: Array<{ set: number }> };
    expect(body.lines_clamped).toBeGreaterThan(0);
    expect(body.clamped.every((c) => c.set === Number.MAX_SAFE_INTEGER)).toBe(true);
  });

  it('given an unknown location or product on one line, then that line is unresolved and the others apply', () => {
    const plan = decideLevels(
      state(),
      levels('absolute', [
        { barcode: 'A', location: { location_id: 'missing' }, set: { on_hand_qty: 1 } },
        { barcode: 'A', location: { location: { identifier_type: 'pos', identifier_value: 'DUP' } }, set: { on_hand_qty: 1 } },
        { barcode: 'ZZ', location: { location_id: LOC }, set: { on_hand_qty: 1 } },
        { barcode: 'A', location: { location_id: LOC }, set: { on_hand_qty: 1 } },
      ]),
    );
    expect(plan.reply.body).toMatchObject({
      lines_unresolved: 3,
      lines_updated: 1,
      unresolved: [
        { barcode: 'A', location_id: 'missing', reason: 'location_unresolved' },
        { barcode: 'A', reason: 'location_ambiguous' },
        { barcode: 'ZZ', location_id: LOC, reason: 'product_not_found' },
      ],
    });
  });

  it('given stock, when a line empties available_qty, then it is listed in stock_zero and an event is emitted', () => {
    const plan = decideLevels(
      state([level(PA, 'A', { available_qty: 2 })]),
      levels('delta', [{ barcode: 'A', location: { location_id: LOC }, delta: { available_qty: -2 } }]),
    );
    expect(plan.reply.body).toMatchObject({ stock_zero: [{ barcode: 'A', location_id: LOC }] });
    expect(plan.events[0]?.payload).toMatchObject({ event_type: 'stock_zero', change_type: 'levels_delta', source_system: 'wms' });
  });
});
