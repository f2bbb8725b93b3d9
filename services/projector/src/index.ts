export { startProjector, type Projector, type ProjectorDeps } from './projector.ts';
export { startRelay, type Relay, type RelayDeps } from './relay.ts';
export { runProjector, type RunningProjector } from './runProjector.ts';
export { startPruner, type Pruner } from './pruner.ts';
export { createProbeServer, type ProbeServerOptions } from './probes.ts';
export { PartitionLag, projectorMetrics, relayMetrics, prunerMetrics, upkeepMetrics } from './metrics.ts';
