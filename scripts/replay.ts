// `npm run replay [-- --resume] [--keep-old]`: rebuild the read model from offset 0 of the command
// log into a shadow schema of the live database while the live projector keeps serving, then swap
// the rebuilt tables in under one short lock (D26).
// `npm run replay -- --into scratch [--resume]`: rebuild into a scratch database instead
// (REPLAY_DATABASE_URL, default: the live database's name + `_replay`), without swapping;
// `npm run verify` then compares the two.
import { createServer } from 'node:http';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { SchemaRegistry } from '@ingest/contracts';
import { createPool, dropDatabase, ensureDatabase, migrate, startTableUpkeep, withDatabase } from '@ingest/db';
import { acquireKafka, REPO_ROOT } from '@ingest/devstack';
import { createKafka } from '@ingest/kafka';
import { rebuildInPlace, replayCommandLog, type ReplayProgress } from '@ingest/projector';
import { createRegistry, Gauge, readCommonConfig, setting, settingsAtStart } from '@ingest/runtime';

settingsAtStart({
  roles: ['replay'],
  name: 'npm run replay',
  usage: 'usage: npm run replay [-- --resume] [--keep-old] [--into scratch] [--help]',
});
const { values } = parseArgs({
  options: {
    into: { type: 'string' },
    resume: { type: 'boolean', default: false },
    'keep-old': { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h' },
  },
});
const say = (msg: string) => console.error(`[replay] ${msg}`);
if (values.into !== undefined && values.into !== 'scratch') {
  say(`unknown target --into ${values.into}: use --into scratch, or nothing to rebuild in place`);
  process.exit(2);
}
const inPlace = values.into === undefined;

// The log lives in the broker: KAFKA_BROKERS, the pipeline's running broker, or the project's own started on its data.
const kafka = await acquireKafka({ dataDir: join(REPO_ROOT, '.data', 'kafka'), log: say });
const common = readCommonConfig({ ...process.env, KAFKA_BROKERS: kafka.brokers.join(',') });
const scratchUrl =
  setting(process.env, 'REPLAY_DATABASE_URL') ??
  withDatabase(common.databaseUrl, `${new URL(common.databaseUrl).pathname.slice(1)}_replay`);
const targetUrl = inPlace ? common.databaseUrl : scratchUrl;
if (!inPlace) {
  const scratchName = new URL(scratchUrl).pathname.slice(1);
  if (!values.resume) {
    say(`fresh rebuild into database ${scratchName}`);
    await dropDatabase(scratchUrl, scratchName);
  } else say(`resuming into database ${scratchName}`);
}
// The live database is migrated too: the rebuild copies its tables' definitions.
await ensureDatabase(targetUrl);
await migrate(targetUrl);

const concurrency = setting(process.env, 'REPLAY_CONCURRENCY');
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
const metricsPort = setting(process.env, 'REPLAY_METRICS_PORT');
const server = metricsPort
  ? createServer(
      (_req, res) => void registry.metrics().then((text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text)),
    ).listen(metricsPort)
  : null;
const onProgress = (p: ReplayProgress) => {
  metrics.done.set(p.done);
  metrics.total.set(p.total);
  metrics.rate.set(p.commandsPerSecond);
  metrics.lag.set(p.total - p.done);
  if (p.etaSeconds !== null) metrics.eta.set(p.etaSeconds);
  say(
    `${fmt(p.done)} / ${fmt(p.total)} commands (${p.total ? ((100 * p.done) / p.total).toFixed(1) : '100.0'}%) · ` +
      `${fmt(p.commandsPerSecond)} cmd/s · lag ${fmt(p.total - p.done)} · ETA ${p.etaSeconds === null ? '?' : `${Math.ceil(p.etaSeconds)} s`}`,
  );
};
const replayOptions = {
  kafka: createKafka({ brokers: common.kafkaBrokers, security: common.kafkaSecurity, clientId: 'ingest-replay' }),
  schemas: new SchemaRegistry(),
  topic: common.topics.commands,
  batchSize: setting(process.env, 'REPLAY_BATCH'),
  concurrency,
  onProgress,
  onWarn: (msg: string, detail: object) => say(`${msg} ${JSON.stringify(detail)}`),
  signal: stop.signal,
};
const pool = inPlace ? null : createPool({ connectionString: scratchUrl, max: concurrency + 1, applicationName: 'ingest-replay' });
// A scratch replay reads the live database's parked commands: what live did not apply, it passes over.
const live = inPlace ? null : createPool({ connectionString: common.databaseUrl, max: 2, applicationName: 'ingest-replay-parked' });
// The rebuilt tables are analyzed and vacuumed as they fill where autovacuum does not run (DB_UPKEEP):
// a replay into never-analyzed tables plans its statements for empty ones. In place, the live
// projector's upkeep may hold the turn; one of the two does it.
const upkeep = startTableUpkeep({
  connectionString: inPlace ? common.databaseUrl : scratchUrl,
  mode: setting(process.env, 'DB_UPKEEP'),
  intervalMs: setting(process.env, 'DB_UPKEEP_INTERVAL'),
  log: { info: () => {}, warn: (_obj, msg) => say(msg) },
});
const resumeHint = `npm run replay --${inPlace ? '' : ' --into scratch'} --resume`;
try {
  const result = pool
    ? await replayCommandLog({ ...replayOptions, pool, ...(live ? { parkedFrom: live } : {}) })
    : await rebuildInPlace({
        ...replayOptions,
        databaseUrl: common.databaseUrl,
        resume: values.resume,
        keepRetired: values['keep-old'],
        say,
      });
  if (!result.complete) say(`stopped before the ${inPlace ? 'swap' : 'end of the log'}; continue with: ${resumeHint}`);
  say(
    `${result.complete ? 'done' : 'stopped'}: ${fmt(result.applied)} applied, ${fmt(result.skipped)} skipped in ${result.seconds.toFixed(1)} s (${fmt(result.commandsPerSecond)} cmd/s)`,
  );
  if (!inPlace) say('compare with the live read model: npm run verify');
  if (!result.complete) process.exitCode = 3;
} catch (err) {
  say(`failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
} finally {
  await upkeep.stop();
  await pool?.end();
  await live?.end();
  await kafka.release();
  server?.close();
}
