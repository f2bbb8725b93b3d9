// Endpoint 3, inventory levels (D17), set-based: levelsSet.ts maps its lines onto the level write
// shared with endpoint 5 (../store/levelWrites.ts), and levels.equivalence.int.test.ts holds it to its
// specification, the pure decider decideLevels in packages/domain/src/inventory/decideLevels.ts.
// Reply and events come from the domain (outcome.ts levelsReply and stock events), as the decider's do.
export { levelLinesIndependent, projectLevelsSet } from './levelsSet.ts';
