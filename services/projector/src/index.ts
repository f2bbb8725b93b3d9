export { startProjector, type Projector, type ProjectorDeps } from './projector.ts';
export { startRelay, type Relay, type RelayDeps } from './relay.ts';
export { runProjector, type RunningProjector } from './service.ts';
