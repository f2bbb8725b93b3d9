import { KAFKA_SETTINGS_CHECKS } from '@ingest/kafka';
import { createLogger, onShutdown, setting, settingsAtStart, startTracing } from '@ingest/runtime';
import { runGateway } from './runGateway.ts';

// --help prints every setting; bad settings are all reported before anything starts.
const warnings = settingsAtStart({
  roles: ['gateway'],
  name: 'ingest gateway',
  usage: 'usage: node services/gateway/src/main.ts [--help]',
  checks: KAFKA_SETTINGS_CHECKS,
});
const log = createLogger({ name: 'gateway', level: setting(process.env, 'LOG_LEVEL') });
for (const w of warnings) log.warn(w);
try {
  // Off unless OTEL_TRACES_EXPORTER is set; then spans for requests and appends.
  const tracing = await startTracing(process.env, { serviceName: 'ingest-gateway' });
  const gateway = await runGateway(process.env, log);
  // The last spans are flushed within the gateway's step (at most 2 s), not in a step of their own.
  onShutdown(log, [['gateway', () => gateway.stop().finally(() => tracing.shutdown())]]);
} catch (err) {
  log.fatal({ err }, 'gateway failed to start');
  process.exit(1);
}
