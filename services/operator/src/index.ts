// The operator's tools as a library (the CLIs in cli/ are their command lines): rebuilding the read
// model from the command log (D26), comparing two read models, and the parked-commands tool (its
// retry and skip are @ingest/projection's, shared with the gateway's operator API).
export {
  replayCommandLog,
  startReplay,
  logEnd,
  REPLAY_PROJECTOR,
  type Positions,
  type ReplayRun,
  type ReplayOptions,
  type ReplayProgress,
  type ReplayResult,
} from './replay/replayer.ts';
export { compareReadModels, READ_MODEL_TABLES, type TableComparison } from './replay/compareReadModels.ts';
export { rebuildInPlace, type RebuildOptions, type RebuildResult } from './replay/rebuildInPlace.ts';
export { REBUILT_TABLES, SHADOW_SCHEMA } from './replay/shadowSchema.ts';
export { keysTool, KEYS_VERBS } from './tools/keysTool.ts';
export { migrateTool } from './tools/migrateTool.ts';
export { parkedTool, PARKED_VERBS } from './tools/parkedTool.ts';
export { partitionsTool, PARTITIONS_VERBS } from './tools/partitionsTool.ts';
export { archivePartition, monthOf, type Manifest } from './partitions/archivePartition.ts';
export { restorePartition } from './partitions/restorePartition.ts';
export { replayTool, REPLAY_FLAGS, type ReplayToolOptions } from './tools/replayTool.ts';
export { verifyTool } from './tools/verifyTool.ts';
export { stopSignal } from './tools/stopSignal.ts';
