// Endpoint 5, inventory available, set-based: availableSet.ts maps its lines onto the level write
// shared with endpoint 3 (../store/levelWrites.ts), and available.equivalence.int.test.ts holds it to
// its specification, the pure decider decideAvailable in packages/domain/src/inventory/decideAvailable.ts.
// Reply and events come from the domain (outcome.ts availableReply and stock events), as the decider's do.
export { linesIndependent, projectAvailableSet } from './availableSet.ts';
