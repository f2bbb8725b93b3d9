import { describe, expect, it } from 'vitest';
import { decideAvailable } from './decideAvailable.ts';
import { decideLevels } from './decideLevels.ts';
import type { InventoryAvailableCommand, InventoryLevelsCommand } from './inventoryCommand.ts';
import { LOC, PA, level, meta, state } from '../../testing/inventory.ts';

// D19: dedupe by idempotency_key is for the delta modes; absolute modes record the key in logs
// only. A delta key is recorded with the request's payload hash, so a reuse with another payload is
// told apart; the warning names the key.

const stored = () => [level(PA, 'A', { on_hand_qty: 5, available_qty: 5 })];
const applied = { appliedKey: { payload_hash: 'h-first' } };
const available = (mode: 'absolute' | 'delta', over: Partial<InventoryAvailableCommand> = {}): InventoryAvailableCommand => ({
  ...meta({ idempotency_key: 'evt-7' }),
  kind: 'inventory.available',
  payload: {
    mode,
    location: { location_id: LOC },
    lines: [mode === 'absolute' ? { barcode: 'A', available_qty: 2 } : { barcode: 'A', available_delta: -3 }],
  },
  ...over,
});
const levels = (mode: 'absolute' | 'delta', over: Partial<InventoryLevelsCommand> = {}): InventoryLevelsCommand => ({
  ...meta({ idempotency_key: 'evt-7' }),
  kind: 'inventory.levels',
  payload: {
    mode,
    lines: [
      mode === 'absolute'
        ? { barcode: 'A', location: { location_id: LOC }, set: { on_hand_qty: 2 } }
        : { barcode: 'A', location: { location_id: LOC }, delta: { on_hand_qty: -3 } },
    ],
  },
  ...over,
});

describe('D19: an absolute request is never deduped, even under a key a delta request applied', () => {
  it('endpoint 5: applied, logged with the key, and the key is not recorded', () => {
    const plan = decideAvailable(state(stored(), applied), available('absolute'));
    expect(plan.reply.body).toMatchObject({ lines_updated: 1, lines_deduped: 0 });
    expect(plan.levels[0]?.available_qty).toBe(2);
    expect(plan.logs[0]?.idempotency_key).toBe('evt-7');
    expect(plan.recordKey).toBeNull();
  });

  it('endpoint 3: applied, logged with the key, and the key is not recorded', () => {
    const plan = decideLevels(state(stored(), applied), levels('absolute'));
    expect(plan.reply.body).toMatchObject({ lines_updated: 1, lines_deduped: 0 });
    expect(plan.levels[0]?.on_hand_qty).toBe(2);
    expect(plan.logs[0]?.idempotency_key).toBe('evt-7');
    expect(plan.recordKey).toBeNull();
  });
});

describe('D19: the key a delta request records', () => {
  it('carries an empty payload hash when the command has none, so any later payload under that key is warned about', () => {
    const { payload_hash: _a, ...availableWithoutHash } = available('delta');
    const { payload_hash: _l, ...levelsWithoutHash } = levels('delta');
    expect(decideAvailable(state(stored()), availableWithoutHash).recordKey).toEqual({
      idempotency_key: 'evt-7',
      payload_hash: '',
    });
    expect(decideLevels(state(stored()), levelsWithoutHash).recordKey).toEqual({
      idempotency_key: 'evt-7',
      payload_hash: '',
    });
  });

  it('the idempotency_key_reused warning names the key and says nothing was applied', () => {
    const plan = decideLevels(state(stored(), applied), levels('delta'));
    expect(plan.reply.body['warnings']).toEqual([
      {
        code: 'idempotency_key_reused',
        message: 'idempotency_key evt-7 was already applied with a different payload; nothing was applied',
      },
    ]);
  });
});
