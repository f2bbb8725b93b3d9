export { runGateway, readGatewayConfig, type RunningGateway } from './runGateway.ts';
export { buildApp, defaultDocs, type GatewayDeps } from './app.ts';
export { servedContracts, type DocsDeps } from './routes/docs.ts';
export { DEFAULT_GATEWAY_CONFIG, type GatewayConfig } from './config.ts';
export { createReplyWaiter, type ReplyWaiter } from './commands/replies.ts';
export { requireAccess, secretMatches, type AccessConfig, type AccessRule } from './edge/auth.ts';
export { dryRunRequested, type DryRunner, type DryRunOutcome } from './commands/submit.ts';
export { payloadHash } from './commands/idempotency.ts';
export { gatewayMetrics } from './metrics.ts';
