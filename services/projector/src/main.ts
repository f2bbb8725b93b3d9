import { KAFKA_SETTINGS_CHECKS } from '@ingest/kafka';
import { createLogger, onShutdown, setting, settingsAtStart, startTracing } from '@ingest/runtime';
import { createProbeServer } from './probes.ts';
import { runProjector } from './runProjector.ts';

// --help prints every setting; bad settings are all reported before anything starts.
const warnings = settingsAtStart({
  roles: ['projector'],
  name: 'ingest projector',
  usage: 'usage: node services/projector/src/main.ts [--help]',
  checks: KAFKA_SETTINGS_CHECKS,
});
const log = createLogger({ name: 'projector', level: setting(process.env, 'LOG_LEVEL') });
for (const w of warnings) log.warn(w);
try {
  // Off unless OTEL_TRACES_EXPORTER is set; then a span per command applied.
  const tracing = await startTracing(process.env, { serviceName: 'ingest-projector' });
  const projector = await runProjector(process.env, log);
  // The projector has no API; it serves its probes and metrics (probes.ts).
  const port = setting(process.env, 'PROJECTOR_METRICS_PORT');
  const server = createProbeServer({ registry: projector.registry, readiness: projector.readiness }).listen(port, () =>
    log.info({ port }, 'projector probes on /healthz and /readyz, metrics on /metrics'),
  );
  onShutdown(log, [
    ['metrics', () => new Promise<void>((r) => server.close(() => r()))],
    // The last spans are flushed within the projector's step (at most 2 s), not in a step of their own.
    ['projector', () => projector.stop().finally(() => tracing.shutdown())],
  ]);
} catch (err) {
  log.fatal({ err }, 'projector failed to start');
  process.exit(1);
}
