import { describe, expect, it } from 'vitest';
import { decideAvailable } from './decideAvailable.ts';
import { decideSnapshot } from './decideSnapshot.ts';
import type { InventorySnapshotCommand } from './inventoryCommand.ts';
import type { LocationRef } from './location.ts';
import { meta, state } from '../../testing/inventory.ts';

// D14: the request location of endpoints 4 and 5 that does not resolve refuses the command with
// 422 and an error that names the location as the client sent it.

const UNKNOWN = '01900000-0000-7000-8000-0000000000ff';
const snapshot = (location: LocationRef): InventorySnapshotCommand => ({
  ...meta(),
  kind: 'inventory.snapshot',
  payload: { location, snapshot_date: '2026-11-02', lines: [{ barcode: 'A', on_hand_qty: 1 }] },
});

describe('D14: a request location that does not resolve', () => {
  it('an unknown location_id: 422 location_unresolved naming the id', () => {
    expect(decideSnapshot(state(), snapshot({ location_id: UNKNOWN })).reply).toEqual({
      status: 422,
      body: { ok: false, error_kind: 'location_unresolved', error: `location_id ${UNKNOWN} is not a location of this shop` },
    });
  });

  it('an identifier no location has: 422 location_unresolved naming the identifier', () => {
    expect(decideSnapshot(state(), snapshot({ location: { identifier_type: 'pos', identifier_value: 'NONE' } })).reply).toEqual({
      status: 422,
      body: { ok: false, error_kind: 'location_unresolved', error: 'location pos=NONE is not a location of this shop' },
    });
  });

  it('an identifier several locations share: 422 location_ambiguous naming the identifier', () => {
    const plan = decideAvailable(state(), {
      ...meta(),
      kind: 'inventory.available',
      payload: { mode: 'absolute', location: { location: { identifier_type: 'pos', identifier_value: 'DUP' } }, lines: [] },
    });
    expect(plan.reply).toEqual({
      status: 422,
      body: { ok: false, error_kind: 'location_ambiguous', error: 'location pos=DUP matches several locations' },
    });
  });
});
