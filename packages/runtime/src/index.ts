export { createLogger, silentLogger, REDACT_PATHS, type Logger } from './logger.ts';
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
} from './metrics.ts';
export { ConfigError, envInt } from './env.ts';
export { onShutdown } from './shutdown.ts';
export { readCommonConfig, DEFAULT_DATABASE_URL, DEFAULT_KAFKA_BROKERS, type CommonConfig } from './commonConfig.ts';
export { DEFAULT_TOPICS_NAMES } from './topicDefaults.ts';
export { publicBaseUrl } from './publicUrl.ts';
export { businessDate, previousDate, isTimeZone } from './businessDate.ts';
export { failpoint, setFailpoints, failpointsActive, FailpointError } from './failpoints.ts';
export { Secret } from './secret.ts';
export {
  readKafkaSecurity,
  describeKafkaSecurity,
  PLAINTEXT,
  SASL_MECHANISMS,
  type KafkaSecurity,
  type KafkaTls,
  type KafkaSasl,
  type SaslMechanism,
} from './kafkaSecurity.ts';
export { readTopicReplication, PRODUCTION_REPLICATION, SINGLE_BROKER_REPLICATION, type TopicReplication } from './topicReplication.ts';
export { checkReadiness, readinessProbe, registerReadinessMetric, type ReadinessChecks } from './probes.ts';
export { wantsPrettyLogs, type LoggerOptions } from './logger.ts';
export { withLogContext, currentRequestId, type LogContext } from './logContext.ts';
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
} from './tracing.ts';
export { SETTINGS, ROLES, GROUPS, type Role, type SettingName, type SettingDef } from './settings/catalog.ts';
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
} from './settings/settings.ts';
export { settingsAtStart, unknownSettings, combinedChecks, type StartOptions } from './settings/startup.ts';
