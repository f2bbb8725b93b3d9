import { describe, expect, it } from 'vitest';
import { decideAvailable } from './decideAvailable.ts';
import type { AvailableLine, InventoryAvailableCommand } from './inventoryCommand.ts';
import { LOC, PA, T0, T1, level, meta, state } from '../../testing/inventory.ts';

const available = (
  mode: 'absolute' | 'delta',
  lines: AvailableLine[],
  over: Partial<InventoryAvailableCommand> = {},
): InventoryAvailableCommand => ({
  ...meta(),
  kind: 'inventory.available',
  payload: { mode, location: { location_id: LOC }, lines },
  ...over,
});

describe('decideAvailable (endpoint 5)', () => {
  it('given a level, when absolute, then only available_qty changes and an available_set log is written', () => {
    const plan = decideAvailable(
      state([level(PA, 'A', { on_hand_qty: 10, available_qty: 8, reserved_qty: 2 })]),
      available('absolute', [{ barcode: 'A', available_qty: 4 }]),
    );
    expect(plan.levels[0]).toMatchObject({ on_hand_qty: 10, available_qty: 4, reserved_qty: 2 });
    expect(plan.logs.map((l) => [l.change_type, l.changed_fields])).toEqual([['available_set', ['available_qty']]]);
    expect(plan.daily).toEqual([]);
    expect(plan.reply.body).toMatchObject({ lines_updated: 1, lines_unchanged: 0 });
  });

  it('given no level, then it is created with on_hand_qty 0', () => {
    const plan = decideAvailable(state(), available('absolute', [{ barcode: 'A', available_qty: 3 }]));
    expect(plan.levels[0]).toMatchObject({ on_hand_qty: 0, available_qty: 3 });
  });

  it('given the same value, when absolute is resent, then unchanged and no log (D15a)', () => {
    const plan = decideAvailable(
      state([level(PA, 'A', { available_qty: 4 })]),
      available('absolute', [{ barcode: 'A', available_qty: 4 }]),
    );
    expect(plan.reply.body).toMatchObject({ lines_updated: 0, lines_unchanged: 1 });
    expect(plan.logs).toEqual([]);
  });

  it('given 2 available, when delta -5, then stored 0 and reported in clamped with the computed value', () => {
    const plan = decideAvailable(
      state([level(PA, 'A', { available_qty: 2 })]),
      available('delta', [{ barcode: 'A', available_delta: -5 }]),
    );
    expect(plan.levels[0]?.available_qty).toBe(0);
    expect(plan.reply.body).toMatchObject({ lines_clamped: 1, clamped: [{ barcode: 'A', computed: -3, set: 0 }] });
    expect(plan.logs[0]?.change_type).toBe('available_delta');
  });

  it('given a level near the top, when a delta would pass 2^53 - 1, then the stored value is that bound and the line is reported in clamped', () => {
    const plan = decideAvailable(
      state([level(PA, 'A', { available_qty: Number.MAX_SAFE_INTEGER - 10 })]),
      available('delta', [{ barcode: 'A', available_delta: 1_000_000_000_000 }]),
    );
    expect(plan.levels[0]?.available_qty).toBe(Number.MAX_SAFE_INTEGER);
    expect(plan.reply.body).toMatchObject({ lines_clamped: 1, clamped: [{ barcode: 'A', set: Number.MAX_SAFE_INTEGER }] });
  });

  it('given an applied idempotency key, when a delta request reuses it, then every line is deduped and nothing changes (D19)', () => {
    const plan = decideAvailable(
      state([level(PA, 'A', { available_qty: 2 })], { appliedKey: { payload_hash: 'h1' } }),
      available('delta', [{ barcode: 'A', available_delta: 1 }], { idempotency_key: 'k' }),
    );
    expect(plan.levels).toEqual([]);
    expect(plan.reply.body).toMatchObject({ lines_deduped: 1, lines_updated: 0 });
    expect(plan.reply.body).not.toHaveProperty('warnings');
  });

  it('given an applied key with another payload, then deduped and warned idempotency_key_reused (D19)', () => {
    const plan = decideAvailable(
      state([], { appliedKey: { payload_hash: 'other' } }),
      available('delta', [{ barcode: 'A', available_delta: 1 }], { idempotency_key: 'k' }),
    );
    expect(plan.reply.body).toMatchObject({ lines_deduped: 1, warnings: [{ code: 'idempotency_key_reused' }] });
  });

  it('given a delta with a new key, then the key is recorded; absolute modes record no key', () => {
    expect(
      decideAvailable(state(), available('delta', [{ barcode: 'A', available_delta: 1 }], { idempotency_key: 'k' })).recordKey,
    ).toEqual({ idempotency_key: 'k', payload_hash: 'h1' });
    expect(
      decideAvailable(state(), available('absolute', [{ barcode: 'A', available_qty: 1 }], { idempotency_key: 'k' })).recordKey,
    ).toBeNull();
  });

  it('given a newer absolute write, then an older absolute is stale but a delta still applies (D15b)', () => {
    const s = state([level(PA, 'A', { available_qty: 5 }, { last_absolute_as_of: T1 })]);
    expect(
      decideAvailable(s, available('absolute', [{ barcode: 'A', available_qty: 1 }], { inventory_as_of: T0 })).reply.body,
    ).toMatchObject({ lines_stale: 1, lines_updated: 0 });
    expect(
      decideAvailable(s, available('delta', [{ barcode: 'A', available_delta: -1 }], { inventory_as_of: T0 })).levels[0]?.available_qty,
    ).toBe(4);
  });

  it('given 0 available, when restocked, then stock_restored; when emptied again, then stock_zero with the next seq (D18)', () => {
    const plan = decideAvailable(
      state([level(PA, 'A', { available_qty: 0 }, { stock_event_seq: 4 })]),
      available('delta', [
        { barcode: 'A', available_delta: 2 },
        { barcode: 'A', available_delta: -2 },
      ]),
    );
    expect(plan.events.map((e) => [e.channel, e.payload['seq']])).toEqual([
      ['stock_restored', 5],
      ['stock_zero', 6],
    ]);
  });
});

describe('decideAvailable, stock events of a level that was never in stock (D18)', () => {
  it('given a level created at 0, when it first gets stock, then no stock_restored (it never went out of stock)', () => {
    const plan = decideAvailable(
      state([level(PA, 'A', { available_qty: 0 }, { stock_event_seq: 0 })]),
      available('delta', [{ barcode: 'A', available_delta: 3 }]),
    );
    expect(plan.events).toEqual([]);
  });
});
