import { describe, it } from 'vitest';
import { PROPERTY_TIMEOUT, sameAsDeciders, twoDatabases } from '../../../testing/inventoryEquivalence.ts';

// snapshotSet.ts against decideSnapshot: random command sequences of every kind, the snapshots
// set-based on one side (packages/projection/testing/inventoryEquivalence.ts); replies, events and rows must be identical.
describe('the set-based snapshot equals decideSnapshot', () => {
  const dbs = twoDatabases('setb_snap');
  it('random command sequences give identical replies, events and rows', () => sameAsDeciders(dbs, 'inventory.snapshot'), PROPERTY_TIMEOUT);
});
