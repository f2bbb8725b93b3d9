import { SchemaRegistry } from '@ingest/contracts';
import { createListener, createPool, type Listener } from '@ingest/db';
import { createCommandLog, createKafka, createMessageSink } from '@ingest/kafka';
import {
  ConfigError,
  createRegistry,
  registerPoolMetrics,
  envDuration,
  envInt,
  envString,
  isTimeZone,
  publicBaseUrl,
  readCommonConfig,
  setFailpoints,
  type Logger,
  type Registry,
} from '@ingest/runtime';
import { startDailyScheduler, type DailyScheduler } from './dailyScheduler.ts';
import { startProjector } from './projector.ts';
import { startPruner, type Pruner } from './pruner.ts';
import { startRelay, type Relay } from './relay.ts';

export interface RunningProjector {
  registry: Registry;
  scheduler: DailyScheduler;
  relay: Relay;
  pruner: Pruner;
  /** Readiness (issue 11): joined its consumer group, reaches PostgreSQL, holds its LISTEN connection. */
  readiness(): Promise<Record<string, boolean>>;
  stop(): Promise<void>;
}

/** Wires the projector, the outbox relay, the daily scheduler and the pruner from the environment. */
export async function runProjector(
  env: NodeJS.ProcessEnv,
  log: Logger,
  opts: { registry?: Registry; /** The process's one LISTEN connection, when shared with a gateway. */ listener?: Listener } = {},
): Promise<RunningProjector> {
  const common = readCommonConfig(env);
  setFailpoints(common.failpoints);
  const role = common.dbRole || undefined;
  const pool = createPool({
    connectionString: common.databaseUrl,
    role,
    max: 10,
    applicationName: 'ingest-projector',
    onError: (err) => log.warn({ err }, 'database connection lost'),
  });
  const registry = opts.registry ?? createRegistry({ defaultMetrics: true });
  registerPoolMetrics(registry, 'projector', pool);
  const listener =
    opts.listener ?? createListener({ connectionString: common.databaseUrl, role, applicationName: 'ingest-projector-listen', log: log.child({ component: 'listen' }) });
  const kafka = createKafka({ brokers: common.kafkaBrokers, security: common.kafkaSecurity, clientId: 'ingest-projector', log: log.child({ component: 'kafka' }) });
  const sink = await createMessageSink(kafka);
  const relay = await startRelay({
    pool,
    connectionString: common.databaseUrl,
    role,
    listener,
    sink,
    log: log.child({ component: 'relay' }),
    registry,
    fenceMs: envDuration(env, 'RELAY_FENCE', '15s', 0),
    publicBaseUrl: publicBaseUrl(env),
  });
  const projector = await startProjector({
    pool,
    kafka,
    schemas: new SchemaRegistry(),
    topics: common.topics,
    groupId: envString(env, 'PROJECTOR_GROUP_ID', 'ingest-projector'),
    log: log.child({ component: 'projector' }),
    registry,
    partitionsConsumedConcurrently: envInt(env, 'PROJECTOR_CONCURRENCY', 3, 1),
    sessionTimeoutMs: envDuration(env, 'KAFKA_SESSION_TIMEOUT', '10s', 6000),
    heartbeatIntervalMs: envDuration(env, 'KAFKA_HEARTBEAT_INTERVAL', '1s', 100),
    maxAttempts: envInt(env, 'PROJECTOR_MAX_ATTEMPTS', 3, 1),
    retryBackoffMs: envDuration(env, 'PROJECTOR_RETRY_BACKOFF', '100ms', 1),
    groupMaxCommands: envInt(env, 'PROJECTOR_GROUP_COMMANDS', 64, 1),
    groupMaxBytes: envInt(env, 'PROJECTOR_GROUP_BYTES', 8 * 1024 * 1024, 1024),
  });
  const timeZone = envString(env, 'BUSINESS_TIMEZONE', 'Asia/Tokyo');
  if (!isTimeZone(timeZone)) throw new ConfigError(`BUSINESS_TIMEZONE is not a known time zone: ${timeZone}`);
  const scheduler = startDailyScheduler({
    pool,
    commandLog: createCommandLog(sink, common.topics.commands),
    log: log.child({ component: 'daily-scheduler' }),
    timeZone,
    intervalMs: envInt(env, 'DAILY_SNAPSHOT_CHECK_MS', 60_000, 1000),
  });
  const pruner = startPruner({
    pool,
    log: log.child({ component: 'pruner' }),
    registry,
    resultRetentionMs: common.resultRetentionMs,
    markerRetentionMs: common.markerRetentionMs,
    idempotencyKeyTtlMs: common.idempotencyKeyTtlMs,
    intervalMs: envDuration(env, 'PRUNE_INTERVAL', '1m', 100),
  });
  return {
    registry,
    scheduler,
    relay,
    pruner,
    readiness: async () => ({
      consumer: projector.joined(),
      database: await pool.query('SELECT 1').then(() => true, () => false),
      listen: listener.connected(),
    }),
    stop: async () => {
      scheduler.stop();
      await projector.stop();
      await relay.stop();
      await pruner.stop();
      if (!opts.listener) await listener.close();
      await sink.close();
      await pool.end();
    },
  };
}
