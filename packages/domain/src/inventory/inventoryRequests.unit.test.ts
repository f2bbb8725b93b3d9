import { describe, expect, it } from 'vitest';
import { decideAvailable } from './decideAvailable.ts';
import { decideLevels } from './decideLevels.ts';
import type { AvailableLine, InventoryAvailableCommand, InventoryLevelsCommand, LevelsLine } from './inventoryCommand.ts';
import { LOC, PA, PB, level, meta, state } from '../../testing/inventory.ts';

// Rules of endpoints 3 and 5 that the deciders settle before any SQL runs: location resolution of
// the request (D14, D11), unknown barcodes, D19's dedupe of endpoint 3, D6a's repeated barcode
// (endpoint 5 sends those to the decider path, packages/projection/src/inventory/available/availableSet.ts).
// Moved here from tests/integration/inventory-{available,levels,locations}.int.test.ts, as
// the deciders need no database; the *.equivalence.int.test.ts of packages/projection/src/inventory
// show the SQL path answers as these deciders do.
const available = (
  mode: 'absolute' | 'delta',
  lines: AvailableLine[],
  over: Partial<InventoryAvailableCommand> = {},
): InventoryAvailableCommand => ({
  ...meta({ source_system: 'ec-cart' }),
  kind: 'inventory.available',
  payload: { mode, location: { location_id: LOC }, lines },
  ...over,
});
const levels = (mode: 'absolute' | 'delta', lines: LevelsLine[], over: Partial<InventoryLevelsCommand> = {}): InventoryLevelsCommand => ({
  ...meta({ source_system: 'wms' }),
  kind: 'inventory.levels',
  payload: { mode, lines },
  ...over,
});

describe('decideAvailable: the request location (D14, D11)', () => {
  it('given no location with that id, then 422 location_unresolved and nothing is written', () => {
    const plan = decideAvailable(
      state(),
      available('delta', [{ barcode: 'A', available_delta: 1 }], {
        payload: {
          mode: 'delta',
          location: { location_id: '01900000-0000-7000-8000-0000000000ff' },
          lines: [{ barcode: 'A', available_delta: 1 }],
        },
      }),
    );
    expect(plan.reply).toEqual({ status: 422, body: { ok: false, error_kind: 'location_unresolved', error: expect.any(String) } });
    expect([plan.levels, plan.logs, plan.events, plan.recordKey]).toEqual([[], [], [], null]);
  });

  it('given an identifier two locations share, then 422 location_ambiguous and nothing is written', () => {
    const plan = decideAvailable(
      state([level(PA, 'A', { available_qty: 5 })]),
      available('absolute', [], {
        payload: {
          mode: 'absolute',
          location: { location: { identifier_type: 'pos', identifier_value: 'DUP' } },
          lines: [{ barcode: 'A', available_qty: 99 }],
        },
      }),
    );
    expect(plan.reply).toEqual({ status: 422, body: { ok: false, error_kind: 'location_ambiguous', error: expect.any(String) } });
    expect([plan.levels, plan.logs]).toEqual([[], []]);
  });

  it('given an identifier of one location, then the answer names its location_id', () => {
    const plan = decideAvailable(
      state(),
      available('absolute', [], {
        payload: {
          mode: 'absolute',
          location: { location: { identifier_type: 'pos', identifier_value: 'S1' } },
          lines: [{ barcode: 'A', available_qty: 2 }],
        },
      }),
    );
    expect(plan.reply.body).toMatchObject({ ok: true, location_id: LOC, lines_updated: 1 });
    expect(plan.levels).toMatchObject([{ location_id: LOC, available_qty: 2 }]);
  });
});

describe('decideAvailable: lines', () => {
  it('given an unknown barcode, then that line is unresolved with product_not_found and nothing is written for it', () => {
    const plan = decideAvailable(
      state(),
      available('delta', [
        { barcode: 'GHOST', available_delta: 3 },
        { barcode: 'A', available_delta: 1 },
      ]),
    );
    expect(plan.reply.body).toMatchObject({
      lines_processed: 2,
      lines_updated: 1,
      lines_unresolved: 1,
      unresolved: [{ barcode: 'GHOST', reason: 'product_not_found' }],
    });
    expect(plan.levels.map((l) => l.barcode)).toEqual(['A']);
    expect(plan.logs.map((l) => l.barcode)).toEqual(['A']);
  });

  it('D6a: given a barcode repeated in one absolute request, then its lines apply in order and count line by line', () => {
    const plan = decideAvailable(
      state(),
      available('absolute', [
        { barcode: 'A', available_qty: 5 },
        { barcode: 'A', available_qty: 5 },
        { barcode: 'A', available_qty: 2 },
      ]),
    );
    expect(plan.reply.body).toMatchObject({ lines_processed: 3, lines_updated: 2, lines_unchanged: 1 });
    expect(plan.levels).toMatchObject([{ barcode: 'A', on_hand_qty: 0, available_qty: 2 }]);
    expect(plan.logs.map((l) => [l.before_data?.available_qty ?? null, l.after_data.available_qty])).toEqual([
      [null, 5],
      [5, 2],
    ]);
  });

  it('given a zero delta, then the line is unchanged and no log is written', () => {
    const plan = decideAvailable(state([level(PA, 'A', { available_qty: 3 })]), available('delta', [{ barcode: 'A', available_delta: 0 }]));
    expect(plan.reply.body).toMatchObject({ lines_updated: 0, lines_unchanged: 1 });
    expect(plan.logs).toEqual([]);
  });
});

describe('decideLevels: D19 dedupe by idempotency_key (endpoint 3)', () => {
  const lines: LevelsLine[] = [
    { barcode: 'A', location: { location_id: LOC }, delta: { on_hand_qty: 3 } },
    { barcode: 'B', location: { location_id: LOC }, delta: { on_hand_qty: 1 } },
  ];

  it('given a new key, when a delta request is applied, then the key is recorded with its payload hash; absolute records none', () => {
    expect(decideLevels(state(), levels('delta', lines, { idempotency_key: 'move-1' })).recordKey).toEqual({
      idempotency_key: 'move-1',
      payload_hash: 'h1',
    });
    expect(
      decideLevels(
        state(),
        levels('absolute', [{ barcode: 'A', location: { location_id: LOC }, set: { on_hand_qty: 1 } }], { idempotency_key: 'move-1' }),
      ).recordKey,
    ).toBeNull();
  });

  it('given the key applied with the same payload, then every line is deduped, nothing changes, no log, no warning', () => {
    const plan = decideLevels(
      state([level(PA, 'A', { on_hand_qty: 3 }), level(PB, 'B', { on_hand_qty: 1 })], { appliedKey: { payload_hash: 'h1' } }),
      levels('delta', lines, { idempotency_key: 'move-1' }),
    );
    expect(plan.reply).toEqual({
      status: 200,
      body: {
        ok: true,
        mode: 'delta',
        shop: 'shop.example',
        lines_processed: 2,
        lines_updated: 0,
        lines_unchanged: 0,
        lines_unresolved: 0,
        lines_clamped: 0,
        lines_deduped: 2,
        lines_stale: 0,
        unresolved: [],
        clamped: [],
        stale: [],
        stock_zero: [],
      },
    });
    expect([plan.levels, plan.logs, plan.events, plan.recordKey]).toEqual([[], [], [], null]);
  });

  it('given the key applied with another payload, then deduped too, and warned idempotency_key_reused', () => {
    const plan = decideLevels(
      state([], { appliedKey: { payload_hash: 'other' } }),
      levels('delta', [lines[0]!], { idempotency_key: 'move-1' }),
    );
    expect(plan.reply.body).toMatchObject({ lines_processed: 1, lines_updated: 0, lines_deduped: 1 });
    expect(plan.reply.body['warnings']).toEqual([expect.objectContaining({ code: 'idempotency_key_reused' })]);
    expect(plan.levels).toEqual([]);
  });

  it('D19: a key applied by either endpoint dedupes the other (one key store per shop): endpoint 5 given a key endpoint 3 applied', () => {
    const plan = decideAvailable(
      state([], { appliedKey: { payload_hash: 'h1' } }),
      available('delta', [{ barcode: 'A', available_delta: 4 }], { idempotency_key: 'evt-3' }),
    );
    expect(plan.reply.body).toMatchObject({ lines_updated: 0, lines_deduped: 1 });
  });
});
