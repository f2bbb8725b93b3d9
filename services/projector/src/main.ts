import { createLogger, envInt, envString, onShutdown, startTracing } from '@ingest/runtime';
import { createProbeServer } from './probes.ts';
import { runProjector } from './service.ts';

const log = createLogger({ name: 'projector', level: envString(process.env, 'LOG_LEVEL', 'info') });
try {
  // Off unless OTEL_TRACES_EXPORTER is set (issue 15); then a span per command applied.
  const tracing = await startTracing(process.env, { serviceName: 'ingest-projector' });
  const projector = await runProjector(process.env, log);
  // The projector has no API; it serves its probes and metrics (probes.ts).
  const port = envInt(process.env, 'PROJECTOR_METRICS_PORT', 9091, 0);
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
