export { createLogger, silentLogger, REDACT_PATHS, type Logger } from './logger.ts';
export { createRegistry, Registry, Counter, Gauge, Histogram } from './metrics.ts';
export { ConfigError, envString, envInt, envList, envDuration } from './env.ts';
export { onShutdown } from './shutdown.ts';
export { readCommonConfig, DEFAULT_DATABASE_URL, DEFAULT_KAFKA_BROKERS, type CommonConfig } from './commonConfig.ts';
export { DEFAULT_TOPICS_NAMES } from './topicDefaults.ts';
export { businessDate, previousDate, isTimeZone } from './businessDate.ts';
export { failpoint, setFailpoints, failpointsActive, FailpointError } from './failpoints.ts';
