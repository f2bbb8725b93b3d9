export { runGateway, readGatewayConfig, type RunningGateway } from './runGateway.ts';
export { buildApp, type GatewayDeps } from './app.ts';
export { DEFAULT_GATEWAY_CONFIG, type GatewayConfig } from './config.ts';
export { createReplyWaiter, type ReplyWaiter } from './replies.ts';
export { secretMatches } from './auth.ts';
export { dryRunRequested, type DryRunner, type DryRunOutcome } from './dryRun.ts';
export { payloadHash } from './inventoryInput.ts';
export { gatewayMetrics } from './metrics.ts';
