import { describe, expect, it } from 'vitest';
import type { InventoryAvailableCommand, InventoryLevelsCommand, InventorySnapshotCommand } from './inventoryCommand.ts';
import {
  availableClamp,
  availableReply,
  levelsClamp,
  levelsReply,
  locationNotResolved,
  newTally,
  productNotFound,
  snapshotReply,
  staleLine,
  stockZeroLine,
  type AvailableClamp,
  type LevelsClamp,
} from './outcome.ts';
import { LOC, LOC2, SHOP, T0, meta } from '../../testing/inventory.ts';

// The reply shapes both paths build (the deciders and packages/projection/src/inventory's set-based
// statements): the stored reply is compared byte for byte, so key order is asserted too.
const snapshot: InventorySnapshotCommand = {
  ...meta(),
  kind: 'inventory.snapshot',
  payload: {
    location: { location_id: LOC },
    snapshot_date: '2026-11-02',
    lines: [
      { barcode: 'A', on_hand_qty: 1 },
      { barcode: 'Z', on_hand_qty: 2 },
    ],
  },
};
const available: InventoryAvailableCommand = {
  ...meta(),
  kind: 'inventory.available',
  payload: { mode: 'delta', location: { location_id: LOC }, lines: [{ barcode: 'A', available_delta: -3 }] },
};
const levels: InventoryLevelsCommand = {
  ...meta(),
  kind: 'inventory.levels',
  payload: { mode: 'absolute', lines: [{ barcode: 'A', location: { location_id: LOC }, set: { available_qty: 0 } }] },
};

describe('reply items', () => {
  it('given a barcode not in the product master, then product_not_found, with the line location on endpoint 3 only', () => {
    expect(JSON.stringify(productNotFound('Z'))).toBe('{"barcode":"Z","reason":"product_not_found"}');
    expect(JSON.stringify(productNotFound('Z', LOC))).toBe(`{"barcode":"Z","location_id":"${LOC}","reason":"product_not_found"}`);
  });

  it('given a levels line whose location does not resolve, then the location_id it named, if any (D17)', () => {
    expect(locationNotResolved('A', { location_id: LOC2 }, 'location_unresolved')).toEqual({
      barcode: 'A',
      location_id: LOC2,
      reason: 'location_unresolved',
    });
    expect(
      JSON.stringify(locationNotResolved('A', { location: { identifier_type: 'pos', identifier_value: 'DUP' } }, 'location_ambiguous')),
    ).toBe('{"barcode":"A","reason":"location_ambiguous"}');
  });

  it('given stale, clamped and stock_zero lines, then their documented fields in order (D15b, D17, D18)', () => {
    expect(JSON.stringify(staleLine('A', LOC, T0))).toBe(`{"barcode":"A","location_id":"${LOC}","stored_as_of":"${T0}"}`);
    expect(JSON.stringify(availableClamp('A', -1, 0))).toBe('{"barcode":"A","computed":-1,"set":0}');
    expect(JSON.stringify(levelsClamp('A', LOC, 'on_hand_qty', -1, 0))).toBe(
      `{"barcode":"A","location_id":"${LOC}","field":"on_hand_qty","computed":-1,"set":0}`,
    );
    expect(stockZeroLine('A', LOC)).toEqual({ barcode: 'A', location_id: LOC });
  });
});

describe('snapshotReply (endpoint 4)', () => {
  it('given the tally of a snapshot, then the spec body with lines_processed from the request and the D15b stale fields', () => {
    const reply = snapshotReply(snapshot, LOC, {
      upserted: 1,
      logsWritten: 0,
      unresolved: [productNotFound('Z')],
      stale: [],
    });
    expect(reply.status).toBe(200);
    expect(Object.keys(reply.body)).toEqual([
      'ok',
      'shop',
      'location_id',
      'lines_processed',
      'lines_upserted',
      'lines_unresolved',
      'logs_written',
      'lines_stale',
      'unresolved',
      'stale',
    ]);
    expect(reply.body).toEqual({
      ok: true,
      shop: SHOP,
      location_id: LOC,
      lines_processed: 2,
      lines_upserted: 1,
      lines_unresolved: 1,
      logs_written: 0,
      lines_stale: 0,
      unresolved: [{ barcode: 'Z', reason: 'product_not_found' }],
      stale: [],
    });
  });
});

describe('availableReply and levelsReply (endpoints 5 and 3)', () => {
  const tallyKeys = [
    'lines_updated',
    'lines_unchanged',
    'lines_unresolved',
    'lines_clamped',
    'lines_deduped',
    'lines_stale',
    'unresolved',
    'clamped',
    'stale',
  ];

  it('given a tally, then endpoint 5 answers its mode and location before the counts (D15a lines_unchanged)', () => {
    const t = newTally<AvailableClamp>();
    t.updated = 1;
    t.clamped.push(availableClamp('A', -3, 0));
    t.clampedLines = 1;
    const reply = availableReply(available, LOC, t);
    expect(Object.keys(reply.body)).toEqual(['ok', 'mode', 'shop', 'location_id', 'lines_processed', ...tallyKeys]);
    expect(reply.body).toMatchObject({ mode: 'delta', lines_processed: 1, lines_updated: 1, lines_clamped: 1, lines_deduped: 0 });
  });

  it('given an applied idempotency key, then every line counts as deduped (D19)', () => {
    expect(availableReply(available, LOC, newTally(), 1).body).toMatchObject({ lines_updated: 0, lines_deduped: 1 });
    expect(levelsReply(levels, newTally(), [], 1).body).toMatchObject({ lines_deduped: 1, stock_zero: [] });
  });

  it('given a levels tally, then no request location, and stock_zero last (D17, D18)', () => {
    const t = newTally<LevelsClamp>();
    t.updated = 1;
    const reply = levelsReply(levels, t, [stockZeroLine('A', LOC)]);
    expect(Object.keys(reply.body)).toEqual(['ok', 'mode', 'shop', 'lines_processed', ...tallyKeys, 'stock_zero']);
    expect(reply.body['stock_zero']).toEqual([{ barcode: 'A', location_id: LOC }]);
  });
});
