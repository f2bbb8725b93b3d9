import { SchemaRegistry } from '@ingest/contracts';
import { createListener, createPool, startTableUpkeep, type Listener, type TableUpkeep } from '@ingest/db';
import { compressedClock } from '@ingest/domain';
import { createCommandLog, createKafka, createMessageSink, readKafkaSecurity } from '@ingest/kafka';
import {
  setting,
  createRegistry,
  registerPoolMetrics,
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
import { upkeepMetrics } from './metrics.ts';

export interface RunningProjector {
  registry: Registry;
  /** What this process runs (PROJECTOR_ROLES); the parts it does not run are null. */
  roles: readonly ProjectorRole[];
  scheduler: DailyScheduler | null;
  relay: Relay | null;
  pruner: Pruner | null;
  /** VACUUM / ANALYZE where autovacuum does not run (DB_UPKEEP), beside the pruner. */
  upkeep: TableUpkeep | null;
  /** Readiness (/readyz): joined its consumer group (when it applies), reaches PostgreSQL, holds its LISTEN connection. */
  readiness(): Promise<Record<string, boolean>>;
  stop(): Promise<void>;
}

export type ProjectorRole = 'apply' | 'relay' | 'scheduler' | 'pruner';

/**
 * Wires the projector, the outbox relay, the daily scheduler and the pruner from the environment;
 * PROJECTOR_ROLES chooses which of them this process runs (a deployment may scale the
 * appliers apart from one process that relays, schedules and prunes).
 */
export async function runProjector(
  env: NodeJS.ProcessEnv,
  log: Logger,
  opts: {
    registry?: Registry;
    /** The process's one LISTEN connection, when shared with a gateway. */
    listener?: Listener;
    /** The consumer's fetch wait (default PROJECTOR_FETCH_WAIT), which a stop waits out: the integration tests stop many projectors. */
    fetchWaitMs?: number;
  } = {},
): Promise<RunningProjector> {
  const common = readCommonConfig(env);
  const kafkaSecurity = readKafkaSecurity(env);
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
    opts.listener ??
    createListener({
      connectionString: common.databaseUrl,
      role,
      applicationName: 'ingest-projector-listen',
      log: log.child({ component: 'listen' }),
    });
  const kafka = createKafka({
    brokers: common.kafkaBrokers,
    security: kafkaSecurity,
    clientId: 'ingest-projector',
    log: log.child({ component: 'kafka' }),
  });
  const sink = await createMessageSink(kafka);
  const roles = setting(env, 'PROJECTOR_ROLES');
  const runs = (r: ProjectorRole): boolean => roles.includes(r);
  const relay = !runs('relay')
    ? null
    : await startRelay({
        pool,
        connectionString: common.databaseUrl,
        role,
        listener,
        sink,
        log: log.child({ component: 'relay' }),
        registry,
        fenceMs: setting(env, 'RELAY_FENCE'),
        publicBaseUrl: publicBaseUrl(env),
      });
  const projector = !runs('apply')
    ? null
    : await startProjector({
        pool,
        kafka,
        schemas: new SchemaRegistry(),
        topics: common.topics,
        groupId: setting(env, 'PROJECTOR_GROUP_ID'),
        log: log.child({ component: 'projector' }),
        registry,
        members: setting(env, 'PROJECTOR_CONCURRENCY'),
        sessionTimeoutMs: setting(env, 'KAFKA_SESSION_TIMEOUT'),
        heartbeatIntervalMs: setting(env, 'KAFKA_HEARTBEAT_INTERVAL'),
        maxAttempts: setting(env, 'PROJECTOR_MAX_ATTEMPTS'),
        retryBackoffMs: setting(env, 'PROJECTOR_RETRY_BACKOFF'),
        groupMaxCommands: setting(env, 'PROJECTOR_GROUP_COMMANDS'),
        groupMaxBytes: setting(env, 'PROJECTOR_GROUP_BYTES'),
        fetchWaitMs: opts.fetchWaitMs ?? setting(env, 'PROJECTOR_FETCH_WAIT'),
      });
  const timeZone = setting(env, 'BUSINESS_TIMEZONE');
  const businessClock = compressedClock(new Date(), setting(env, 'BUSINESS_DAY_LENGTH'));
  const scheduler = !runs('scheduler')
    ? null
    : startDailyScheduler({
        pool,
        commandLog: createCommandLog(sink, common.topics.commands),
        log: log.child({ component: 'daily-scheduler' }),
        timeZone,
        intervalMs: setting(env, 'DAILY_SNAPSHOT_CHECK_MS'),
        // BUSINESS_DAY_LENGTH below 24 h compresses the scheduler's calendar only (soak runs, D16);
        // the gateway's dates stay the real ones.
        now: () => businessClock(new Date()),
      });
  const pruner = !runs('pruner')
    ? null
    : startPruner({
        pool,
        log: log.child({ component: 'pruner' }),
        registry,
        resultRetentionMs: common.resultRetentionMs,
        markerRetentionMs: common.markerRetentionMs,
        idempotencyKeyTtlMs: common.idempotencyKeyTtlMs,
        intervalMs: setting(env, 'PRUNE_INTERVAL'),
      });
  // Keeping the tables' statistics and dead rows in check belongs with retention: the same process.
  const upkeep = !runs('pruner')
    ? null
    : startTableUpkeep({
        connectionString: common.databaseUrl,
        mode: setting(env, 'DB_UPKEEP'),
        intervalMs: setting(env, 'DB_UPKEEP_INTERVAL'),
        log: log.child({ component: 'upkeep' }),
        ...upkeepMetrics(registry),
      });
  return {
    registry,
    roles,
    scheduler,
    relay,
    pruner,
    upkeep,
    readiness: async () => ({
      ...(projector ? { consumer: projector.joined() } : {}),
      database: await pool.query('SELECT 1').then(
        () => true,
        () => false,
      ),
      listen: listener.connected(),
    }),
    stop: async () => {
      scheduler?.stop();
      await projector?.stop();
      await relay?.stop();
      await pruner?.stop();
      await upkeep?.stop();
      if (!opts.listener) await listener.close();
      await sink.close();
      await pool.end();
    },
  };
}
