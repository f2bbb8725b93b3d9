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
export { settingsAtStart, unknownSettings, combinedChecks, type StartOptions } from './config/startup.ts';
export { readCommonConfig, DEFAULT_DATABASE_URL, DEFAULT_KAFKA_BROKERS, type CommonConfig } from './config/commonConfig.ts';
export { ConfigError, envInt } from './config/env.ts';
export { publicBaseUrl } from './config/publicUrl.ts';
export { Secret } from './config/secret.ts';

// kafka/: the Kafka settings (security, topic replication, topic names), read without a Kafka client.
export {
  readKafkaSecurity,
  describeKafkaSecurity,
  PLAINTEXT,
  SASL_MECHANISMS,
  type KafkaSecurity,
  type KafkaTls,
  type KafkaSasl,
  type SaslMechanism,
} from './kafka/kafkaSecurity.ts';
export {
  readTopicReplication,
  PRODUCTION_REPLICATION,
  SINGLE_BROKER_REPLICATION,
  type TopicReplication,
} from './kafka/topicReplication.ts';
export { DEFAULT_TOPICS_NAMES } from './kafka/topicDefaults.ts';

// observability/: logs, metrics, traces and the readiness probe.
export { createLogger, silentLogger, wantsPrettyLogs, REDACT_PATHS, type Logger, type LoggerOptions } from './observability/logger.ts';
export { withLogContext, currentRequestId, type LogContext } from './observability/logContext.ts';
export {
  createRegistry,
  registerPoolMetrics,
  lintExposition,
  DROPPED_DEFAULT_METRICS,
  Registry,
  Counter,
  Gauge,
  Histogram,
  type PoolCounts,
  type MetricProblem,
} from './observability/metrics.ts';
export {
  startTracing,
  startTracingInMemory,
  type FinishedSpan,
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

// process/: the life of a process: graceful shutdown and the test-only crash points.
export { onShutdown } from './process/shutdown.ts';
export { failpoint, setFailpoints, failpointsActive, FailpointError } from './process/failpoints.ts';

// calendar/: the business date of an instant (D16).
export { businessDate, previousDate, isTimeZone } from './calendar/businessDate.ts';
