// The inventory tables as both paths use them: inventoryStore.ts loads what a decider reads and
// applies its plan (load -> decide -> apply, projectInventory.ts); levelWrites.ts is the set-based
// level write that endpoints 3 and 5 share (their deciders, decideLevels and decideAvailable, live
// in packages/domain/src/inventory and share its LevelBook).
export {
  insertInventoryLogs,
  loadDailyRows,
  loadLevels,
  loadLocationMatches,
  loadLocationMatchesOf,
  loadProductIds,
  stampLevels,
  upsertDailyRows,
  upsertLevels,
} from './inventoryStore.ts';
export { writeLevels, type LevelWriteLine, type LevelWrites } from './levelWrites.ts';
