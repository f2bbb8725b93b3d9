// Endpoint 4, the inventory snapshot, set-based: snapshotSet.ts is its one SQL statement (snapshotRun.ts
// the one for a run of small snapshots in a group transaction, snapshotRuns.ts which), and
// snapshot.equivalence.int.test.ts the property that holds it to its specification, the pure decider
// decideSnapshot in packages/domain/src/inventory/decideSnapshot.ts (with dailyBook.ts for D16b).
// Reply and events come from the domain (outcome.ts snapshotReply and stock events), as the decider's do.
export { projectSnapshotSet, SNAPSHOT_CTES, snapshotParams } from './snapshotSet.ts';
export { projectSnapshotRun, type SnapshotItem } from './snapshotRun.ts';
export { snapshotRunFrom } from './snapshotRuns.ts';
