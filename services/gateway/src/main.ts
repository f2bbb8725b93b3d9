import { createLogger, envString, onShutdown, startTracing } from '@ingest/runtime';
import { runGateway } from './service.ts';

const log = createLogger({ name: 'gateway', level: envString(process.env, 'LOG_LEVEL', 'info') });
try {
  // Off unless OTEL_TRACES_EXPORTER is set (issue 15); then spans for requests and appends.
  const tracing = await startTracing(process.env, { serviceName: 'ingest-gateway' });
  const gateway = await runGateway(process.env, log);
  // The last spans are flushed within the gateway's step (at most 2 s), not in a step of their own.
  onShutdown(log, [['gateway', () => gateway.stop().finally(() => tracing.shutdown())]]);
} catch (err) {
  log.fatal({ err }, 'gateway failed to start');
  process.exit(1);
}
