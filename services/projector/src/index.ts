export { startProjector, type Projector, type ProjectorDeps } from './projector.ts';
export { startRelay, type Relay, type RelayDeps } from './relay.ts';
export { runProjector, type RunningProjector } from './service.ts';
export { replayCommandLog, REPLAY_PROJECTOR, type ReplayOptions, type ReplayProgress, type ReplayResult } from './replay/replayer.ts';
export { compareReadModels, READ_MODEL_TABLES, type TableComparison } from './replay/compareReadModels.ts';
