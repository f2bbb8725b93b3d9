// The ledger: every statement that names an `agent_runtime` table (migrations/), one file per table,
// as small typed functions on a Queryable (the pool, a transaction's client, a session). It is the
// only code that names those tables (ledger.unit.test.ts fails otherwise). A statement that spans
// tables (the claim with its position and shop lock, a command's outbox rows with its result, a key
// with its request row, a pruned batch with the span) stays one statement, in the file of the
// table it is about, composed from the other tables' fragments where they have one.
//
// Schemas: statements over the bookkeeping of the live pipeline name `agent_runtime.<table>`; those
// a rebuild runs against its shadow schema (D26: the claims, a replay's checkpoints, the delta keys,
// the daily runs) name the bare table and resolve through the session's search path.
export * as apiKeys from './apiKeys.ts';
export * as commandRequests from './commandRequests.ts';
export * as commandResults from './commandResults.ts';
export * as dailySnapshotRuns from './dailySnapshotRuns.ts';
export * as idempotencyKeys from './idempotencyKeys.ts';
export * as operatorActions from './operatorActions.ts';
export * as outbox from './outbox.ts';
export * as parkedCommands from './parkedCommands.ts';
export * as processedCommands from './processedCommands.ts';
export * as projectorCheckpoints from './projectorCheckpoints.ts';
export * as prunedSpan from './prunedSpan.ts';
export * as relayLease from './relayLease.ts';
export * as requestKeys from './requestKeys.ts';
export * as shopRateBuckets from './shopRateBuckets.ts';
export { lockShop } from './processedCommands.ts';
export type { PruneTarget } from './prune.ts';
export {
  qualified,
  type CommandPosition,
  type CommandRef,
  type LedgerTable,
  type ReceivedCommand,
  type StoredAnswer,
  type TimePageKey,
} from './types.ts';
