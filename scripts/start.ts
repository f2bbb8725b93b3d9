// `npm start`: the whole pipeline on this machine with nothing else set up.
// Kafka (KAFKA_BROKERS, or the project's own broker), the database and its migrations, the topics,
// then the projector + outbox relay and the gateway in this process. Ctrl-C stops it gracefully.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createListener } from '@ingest/db';
import { prepareInfra, REPO_ROOT } from '@ingest/devstack';
import { runGateway } from '@ingest/gateway';
import { KAFKA_SETTINGS_CHECKS } from '@ingest/kafka';
import { runProjector } from '@ingest/projector';
import { createLogger, createRegistry, onShutdown, readCommonConfig, setting, settingsAtStart, startTracing } from '@ingest/runtime';

if (existsSync(join(REPO_ROOT, '.env'))) process.loadEnvFile(join(REPO_ROOT, '.env'));
// --help prints every setting; bad settings are all reported before anything starts.
const warnings = settingsAtStart({
  roles: ['gateway', 'projector', 'dev'],
  name: 'npm start',
  usage: 'usage: npm start [-- --help]',
  checks: KAFKA_SETTINGS_CHECKS,
});
const log = createLogger({ name: 'ingest', level: setting(process.env, 'LOG_LEVEL') });
for (const w of warnings) log.warn(w);
const say = (msg: string) => log.info(msg);

try {
  const infra = await prepareInfra(process.env, say);
  // Off unless OTEL_TRACES_EXPORTER is set: one trace from the request to the projector's apply.
  const tracing = await startTracing(infra.env, { serviceName: 'ingest' });
  // One process, one registry: the gateway's /metrics shows the projector and relay too.
  const registry = createRegistry({ defaultMetrics: true });
  // One process, one LISTEN connection: replies and the relay share it.
  const common = readCommonConfig(infra.env);
  const listener = createListener({
    connectionString: common.databaseUrl,
    role: common.dbRole || undefined,
    log: log.child({ component: 'listen' }),
  });
  const projector = await runProjector(infra.env, log.child({ component: 'projector' }), { registry, listener });
  const gateway = await runGateway(infra.env, log.child({ component: 'gateway' }), {
    registry,
    listener,
    alsoReady: { projector: projector.readiness },
  });
  onShutdown(log, [
    ['gateway', () => gateway.stop()],
    ['projector', () => projector.stop()],
    ['listen', () => listener.close()],
    ['kafka', () => infra.release().finally(() => tracing.shutdown())],
  ]);
  say(`pipeline ready: http://127.0.0.1:${gateway.port} (Kafka ${infra.env['KAFKA_BROKERS']}, ${infra.kafka.source}); Ctrl-C to stop`);
} catch (err) {
  log.fatal({ err }, 'could not start the pipeline');
  process.exit(1);
}
