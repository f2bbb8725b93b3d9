import { describe, it } from 'vitest';
import { PROPERTY_TIMEOUT, sameAsDeciders, twoDatabases } from '../../../testing/inventoryEquivalence.ts';

// levelsSet.ts (over ../store/levelWrites.ts) against decideLevels: random command sequences of every
// kind, the levels writes set-based on one side (packages/projection/testing/inventoryEquivalence.ts); replies, events and
// rows must be identical.
describe('the set-based levels write equals decideLevels', () => {
  const dbs = twoDatabases('setb_levels');
  it('random command sequences give identical replies, events and rows', () => sameAsDeciders(dbs, 'inventory.levels'), PROPERTY_TIMEOUT);
});
