// `npm run replay -- --into scratch [--resume]`: rebuild the read model from offset 0 of the
// command log into a scratch database (REPLAY_DATABASE_URL, default: the live database's name
// + `_replay`), with the live projector still serving. `npm run verify` then compares the two.
// The in-place rebuild with an atomic swap of the live views (D26) is not built yet.
import { createServer } from 'node:http';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { SchemaRegistry } from '@ingest/contracts';
import { createPool, dropDatabase, ensureDatabase, migrate, withDatabase } from '@ingest/db';
import { acquireKafka, REPO_ROOT } from '@ingest/devstack';
import { createKafka } from '@ingest/kafka';
import { replayCommandLog } from '@ingest/projector';
import { createRegistry, envInt, Gauge, readCommonConfig } from '@ingest/runtime';

const { values } = parseArgs({ options: { into: { type: 'string' }, resume: { type: 'boolean', default: false } } });
const say = (msg: string) => console.error(`[replay] ${msg}`);
if (values.into !== 'scratch') {
  say('only `--into scratch` is available: the in-place rebuild with an atomic swap of the live views is not built yet');
  process.exit(2);
}

// The log lives in the broker: KAFKA_BROKERS, the pipeline's running broker, or the project's own started on its data.
const kafka = await acquireKafka({ dataDir: join(REPO_ROOT, '.data', 'kafka'), log: say });
const common = readCommonConfig({ ...process.env, KAFKA_BROKERS: kafka.brokers.join(',') });
const scratchUrl = process.env['REPLAY_DATABASE_URL'] || withDatabase(common.databaseUrl, `${new URL(common.databaseUrl).pathname.slice(1)}_replay`);
const scratchName = new URL(scratchUrl).pathname.slice(1);
if (!values.resume) {
  say(`fresh rebuild into database ${scratchName}`);
  await dropDatabase(scratchUrl, scratchName);
} else say(`resuming into database ${scratchName}`);
await ensureDatabase(scratchUrl);
await migrate(scratchUrl);

const concurrency = envInt(process.env, 'REPLAY_CONCURRENCY', 3, 1);
const pool = createPool({ connectionString: scratchUrl, max: concurrency + 1, applicationName: 'ingest-replay' });
// Ctrl-C stops between two batches; `--resume` continues from the checkpoints.
const stop = new AbortController();
process.once('SIGINT', () => stop.abort());
process.once('SIGTERM', () => stop.abort());
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

// Progress as metrics too, for dashboards: REPLAY_METRICS_PORT serves /metrics while the replay runs.
const registry = createRegistry();
const gauge = (name: string, help: string) => new Gauge({ name, help, registers: [registry] });
const metrics = {
  done: gauge('replay_commands_done', 'Commands replayed so far in this run'),
  total: gauge('replay_commands_total', 'Commands to replay in this run'),
  rate: gauge('replay_commands_per_second', 'Replay throughput'),
  lag: gauge('replay_lag_commands', 'Commands left to replay'),
  eta: gauge('replay_eta_seconds', 'Estimated seconds to the end of the log'),
};
const metricsPort = envInt(process.env, 'REPLAY_METRICS_PORT', 0, 0);
const server = metricsPort
  ? createServer((_req, res) => void registry.metrics().then((text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text))).listen(metricsPort)
  : null;
try {
  const result = await replayCommandLog({
    pool,
    kafka: createKafka({ brokers: common.kafkaBrokers, clientId: 'ingest-replay' }),
    schemas: new SchemaRegistry(),
    topic: common.topics.commands,
    batchSize: envInt(process.env, 'REPLAY_BATCH', 500, 1),
    concurrency,
    onProgress: (p) => {
      metrics.done.set(p.done);
      metrics.total.set(p.total);
      metrics.rate.set(p.commandsPerSecond);
      metrics.lag.set(p.total - p.done);
      if (p.etaSeconds !== null) metrics.eta.set(p.etaSeconds);
      say(
        `${fmt(p.done)} / ${fmt(p.total)} commands (${p.total ? ((100 * p.done) / p.total).toFixed(1) : '100.0'}%) · ` +
          `${fmt(p.commandsPerSecond)} cmd/s · lag ${fmt(p.total - p.done)} · ETA ${p.etaSeconds === null ? '?' : `${Math.ceil(p.etaSeconds)} s`}`,
      );
    },
    onWarn: (msg, detail) => say(`${msg} ${JSON.stringify(detail)}`),
    signal: stop.signal,
  });
  if (!result.complete) say('stopped before the end of the log; continue with: npm run replay -- --into scratch --resume');
  say(`${result.complete ? 'done' : 'stopped'}: ${fmt(result.applied)} applied, ${fmt(result.skipped)} skipped in ${result.seconds.toFixed(1)} s (${fmt(result.commandsPerSecond)} cmd/s)`);
  say('compare with the live read model: npm run verify');
} catch (err) {
  say(`failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
} finally {
  await pool.end();
  await kafka.release();
  server?.close();
}
