// Rebuild the read model from offset 0 of the command log (D26):
//   (no flag)              into a shadow schema of the live database while the live projector keeps
//                          serving, then swap the rebuilt tables in under one short lock
//   --into scratch         into a scratch database instead (REPLAY_DATABASE_URL, default: the live
//                          database's name + `_replay`), without swapping; `verify` then compares the two
//   --resume               continue a stopped rebuild from its checkpoints
//   --keep-old             keep the retired tables after an in-place swap
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';
import { SchemaRegistry } from '@ingest/contracts';
import { createPool, dropDatabase, ensureDatabase, migrate, startTableUpkeep, withDatabase } from '@ingest/db';
import { createKafka, readKafkaSecurity } from '@ingest/kafka';
import { createRegistry, Gauge, readCommonConfig, setting } from '@ingest/runtime';
import { rebuildInPlace } from '../replay/rebuildInPlace.ts';
import { replayCommandLog, type ReplayProgress } from '../replay/replayer.ts';

export const REPLAY_FLAGS = '[--resume] [--keep-old] [--into scratch]';
/** REPLAY_BUSY_PERCENT of an in-place rebuild when not set (B10: flat out, it starved the live projector). */
export const IN_PLACE_BUSY_PERCENT = 25;

export interface ReplayToolOptions {
  /** How an operator runs this again and then the comparison (the hints name them). */
  command: string;
  verifyCommand: string;
  say: (msg: string) => void;
  /** Stops between two batches (SIGINT/SIGTERM); `--resume` continues. */
  signal: AbortSignal;
}

/** 0 done, 1 failed, 2 usage, 3 stopped before the end (resume to continue). */
export async function replayTool(args: string[], env: NodeJS.ProcessEnv, opts: ReplayToolOptions): Promise<number> {
  const { say } = opts;
  const { values } = parseArgs({
    args,
    options: {
      into: { type: 'string' },
      resume: { type: 'boolean', default: false },
      'keep-old': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.into !== undefined && values.into !== 'scratch') {
    say(`unknown target --into ${values.into}: use --into scratch, or nothing to rebuild in place`);
    return 2;
  }
  const inPlace = values.into === undefined;
  const common = readCommonConfig(env);
  const kafkaSecurity = readKafkaSecurity(env);
  const scratchUrl =
    setting(env, 'REPLAY_DATABASE_URL') ?? withDatabase(common.databaseUrl, `${new URL(common.databaseUrl).pathname.slice(1)}_replay`);
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

  const concurrency = setting(env, 'REPLAY_CONCURRENCY');
  const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
  // Progress as metrics too, for dashboards: REPLAY_METRICS_PORT serves /metrics while the replay runs.
  // With the process's own (memory, event loop, CPU): a replay of a long log runs for hours.
  const registry = createRegistry({ defaultMetrics: true });
  const gauge = (name: string, help: string) => new Gauge({ name, help, registers: [registry] });
  const metrics = {
    done: gauge('replay_commands_done', 'Commands replayed so far in this run'),
    total: gauge('replay_commands_total', 'Commands to replay in this run'),
    rate: gauge('replay_commands_per_second', 'Replay throughput'),
    lag: gauge('replay_lag_commands', 'Commands left to replay'),
    eta: gauge('replay_eta_seconds', 'Estimated seconds to the end of the log'),
  };
  const metricsPort = setting(env, 'REPLAY_METRICS_PORT');
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
    kafka: createKafka({ brokers: common.kafkaBrokers, security: kafkaSecurity, clientId: 'ingest-replay' }),
    schemas: new SchemaRegistry(),
    topic: common.topics.commands,
    batchSize: setting(env, 'REPLAY_BATCH'),
    concurrency,
    // In place the rebuild shares the live database's cores with the live service: it rests by default (B10).
    busyPercent: setting(env, 'REPLAY_BUSY_PERCENT') || (inPlace ? IN_PLACE_BUSY_PERCENT : 100),
    onProgress,
    onWarn: (msg: string, detail: object) => say(`${msg} ${JSON.stringify(detail)}`),
    signal: opts.signal,
  };
  const pool = inPlace ? null : createPool({ connectionString: scratchUrl, max: concurrency + 1, applicationName: 'ingest-replay' });
  // A scratch replay reads the live database's parked commands: what live did not apply, it passes over.
  const live = inPlace ? null : createPool({ connectionString: common.databaseUrl, max: 2, applicationName: 'ingest-replay-parked' });
  // The rebuilt tables are analyzed and vacuumed as they fill where autovacuum does not run (DB_UPKEEP):
  // a replay into never-analyzed tables plans its statements for empty ones. In place, the live
  // projector's upkeep may hold the turn; one of the two does it.
  const upkeep = startTableUpkeep({
    connectionString: targetUrl,
    mode: setting(env, 'DB_UPKEEP'),
    intervalMs: setting(env, 'DB_UPKEEP_INTERVAL'),
    log: { info: () => {}, warn: (_obj, msg) => say(msg) },
  });
  const resumeHint = `${opts.command}${inPlace ? '' : ' --into scratch'} --resume`;
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
    if (!inPlace) say(`compare with the live read model: ${opts.verifyCommand}`);
    return result.complete ? 0 : 3;
  } catch (err) {
    say(`failed: ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  } finally {
    await upkeep.stop();
    await pool?.end();
    await live?.end();
    server?.close();
  }
}
