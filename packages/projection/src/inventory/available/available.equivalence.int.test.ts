import { describe, it } from 'vitest';
import { PROPERTY_TIMEOUT, sameAsDeciders, twoDatabases } from '../../../testing/inventoryEquivalence.ts';

// availableSet.ts (over ../store/levelWrites.ts) against decideAvailable: random command sequences of
// every kind, the available writes set-based on one side (packages/projection/testing/inventoryEquivalence.ts); replies,
// events and rows must be identical.
describe('the set-based available write equals decideAvailable', () => {
  const dbs = twoDatabases('setb_avail');
  it(
    'random command sequences give identical replies, events and rows',
    () => sameAsDeciders(dbs, 'inventory.available'),
    PROPERTY_TIMEOUT,
  );
});
