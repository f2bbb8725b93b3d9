// What every process is built from, one folder per purpose; importers use this index only.

// config/: the settings catalog and its kinds, the settings every process reads, their errors and secrets.
export { SETTINGS, ROLES, GROUPS, type Role, type SettingName, type SettingDef } from './config/catalog.ts';
export {
  setting,
  settingGiven,
  settingsOf,
  checkSettings,
  assertSettings,
  settingsHelp,
  helpRequested,
  settingsTable,
  withSettingsTable,
  TABLE_BEGIN,
  TABLE_END,
  type SettingValue,
} from './config/settings.ts';
export { settingsAtStart, unknownSettings, combinedChecks, type SettingsCheck, type StartOptions } from './config/startup.ts';
export { readCommonConfig, DEFAULT_DATABASE_URL, DEFAULT_KAFKA_BROKERS, type CommonConfig } from './config/commonConfig.ts';
export { ConfigError, envInt } from './config/env.ts';
export { publicBaseUrl } from './config/publicUrl.ts';
export { isTimeZone } from './config/kinds.ts';
export { Secret } from './config/secret.ts';

// observability/: logs, metrics, traces and the readiness probe.
export { createLogger, wantsPrettyLogs, REDACT_PATHS, type Logger, type LoggerOptions } from './observability/logger.ts';
export { withLogContext, currentRequestId, setLogActor, type LogContext } from './observability/logContext.ts';
export {
  createRegistry,
  registerPoolMetrics,
  DROPPED_DEFAULT_METRICS,
  Registry,
  Counter,
  Gauge,
  Histogram,
  type PoolCounts,
} from './observability/metrics.ts';
export {
  startTracing,
  tracesExporterWanted,
  tracingOn,
  startSpan,
  inSpan,
  markFailed,
  withContext,
  injectTraceHeaders,
  contextFromHeaders,
  spanContextOf,
  SpanKind,
  type Tracing,
  type TracingOptions,
  type SpanOptions,
  type Context,
  type Link,
  type Span,
} from './observability/tracing.ts';
export { createMetricsServer } from './observability/metricsServer.ts';
export { checkReadiness, readinessProbe, registerReadinessMetric, type ReadinessChecks } from './observability/probes.ts';

// process/: the life of a process: graceful shutdown, retries with backoff, and the test-only crash points.
export { onShutdown } from './process/shutdown.ts';
export { retry, delay, type RetryOptions, type RetryFailure, type RetrySignal } from './process/retry.ts';
export { failpoint, setFailpoints, failpointsActive, FailpointError } from './process/failpoints.ts';
