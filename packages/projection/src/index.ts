// The projection core (D1, D4): decode a command, apply it exactly once in one transaction (claim,
// effect, stored reply, outbox: their statements are the ledger's, in @ingest/db), the consumer
// pipeline live and replay share, the dry run that answers from the same projections, and the
// resolution of parked commands (retry, skip) that the operator's CLI and the gateway's operator
// API share. The processes around it (the live projector, replay, the parked tool, the gateway's
// dry run and operator API) import it from here and nowhere deeper.
export {
  applyCommand,
  applyGroup,
  isDeterministicDbError,
  projectCommand,
  type ApplyOptions,
  type ApplyOutcome,
  type GroupCommand,
  type GroupOptions,
  type Projection,
} from './applyCommand.ts';
export { processBatch, runCommandPipeline, type CommandRun, type Decode, type PipelinePolicy } from './commandPipeline.ts';
export { createCommandDecoder, type DecodeResult } from './decodeCommand.ts';
export { createDryRunner, type DryRunner, type DryRunnerDeps, type DryRunOutcome } from './dryRun.ts';
export { REASON_MAX, reasonProblem, type ActedBy } from './parked/actionRecord.ts';
export {
  listParked,
  NotOpenParked,
  retryParked,
  skipParked,
  type ActionResult,
  type ParkedDeps,
  type ParkedRow,
} from './parked/resolveParked.ts';
export { projectInventory, type InventoryPath } from './inventory/projectInventory.ts';
export { projectSnapshotRun, projectSnapshotSet, SNAPSHOT_CTES, snapshotParams } from './inventory/snapshot/index.ts';
export type { CommandPosition } from '@ingest/db';
