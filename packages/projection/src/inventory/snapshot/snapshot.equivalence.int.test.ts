import { describe, it } from 'vitest';
import {
  LOC1,
  PROPERTY_TIMEOUT,
  sameAsDeciders,
  sequenceSameAsDeciders,
  twoDatabases,
  type Body,
} from '../../../testing/inventoryEquivalence.ts';

// snapshotSet.ts against decideSnapshot: random command sequences of every kind, the snapshots
// set-based on one side (packages/projection/testing/inventoryEquivalence.ts); replies, events and rows must be identical.
describe('the set-based snapshot equals decideSnapshot', () => {
  const dbs = twoDatabases('setb_snap');
  it('random command sequences give identical replies, events and rows', () => sameAsDeciders(dbs, 'inventory.snapshot'), PROPERTY_TIMEOUT);

  it('a level that a command moves and moves back keeps its updated_at (D15 narrow writes)', async () => {
    // The same snapshot twice: the second's first line moves B from 1 to 5 available, its second line back to 1.
    const twice: Body = {
      kind: 'inventory.snapshot',
      asOf: '2026-11-02T01:00:00.000Z',
      payload: {
        location: { location_id: LOC1 },
        snapshot_date: '2026-11-02',
        lines: [
          { barcode: 'B', on_hand_qty: 0, available_qty: 5 },
          { barcode: 'B', on_hand_qty: 0, available_qty: 1 },
        ],
      },
    };
    await sequenceSameAsDeciders(dbs, 'inventory.snapshot', [twice, twice]);
  });
});
