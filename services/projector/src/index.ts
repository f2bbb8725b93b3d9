export { startProjector, type Projector, type ProjectorDeps } from './projector.ts';
export { startRelay, type Relay, type RelayDeps } from './relay.ts';
export { runProjector, type RunningProjector } from './runProjector.ts';
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
export { listParked, retryParked, skipParked, type ParkedRow, type RetryResult } from './parked.ts';
export { startPruner, type Pruner } from './pruner.ts';
export { createDryRunner, type DryRunner, type DryRunnerDeps, type DryRunOutcome } from './dryRun.ts';
export { createProbeServer, type ProbeServerOptions } from './probes.ts';
export { PartitionLag, projectorMetrics, relayMetrics, prunerMetrics } from './metrics.ts';
