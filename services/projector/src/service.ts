import { SchemaRegistry } from '@ingest/contracts';
import { createPool } from '@ingest/db';
import { createCommandLog, createKafka, createMessageSink } from '@ingest/kafka';
import { ConfigError, createRegistry, envInt, envString, isTimeZone, readCommonConfig, type Logger, type Registry } from '@ingest/runtime';
import { startDailyScheduler, type DailyScheduler } from './dailyScheduler.ts';
import { startProjector } from './projector.ts';
import { startRelay } from './relay.ts';

export interface RunningProjector {
  registry: Registry;
  scheduler: DailyScheduler;
  stop(): Promise<void>;
}

/** Wires the projector and the outbox relay from the environment. */
export async function runProjector(env: NodeJS.ProcessEnv, log: Logger, opts: { registry?: Registry } = {}): Promise<RunningProjector> {
  const common = readCommonConfig(env);
  const role = common.dbRole || undefined;
  const pool = createPool({ connectionString: common.databaseUrl, role, max: 10, applicationName: 'ingest-projector' });
  const registry = opts.registry ?? createRegistry({ defaultMetrics: true });
  const kafka = createKafka({ brokers: common.kafkaBrokers, clientId: 'ingest-projector', log: log.child({ component: 'kafka' }) });
  const sink = await createMessageSink(kafka);
  const relay = await startRelay({ pool, connectionString: common.databaseUrl, role, sink, log: log.child({ component: 'relay' }), registry });
  const projector = await startProjector({
    pool,
    kafka,
    schemas: new SchemaRegistry(),
    topics: common.topics,
    groupId: envString(env, 'PROJECTOR_GROUP_ID', 'ingest-projector'),
    log: log.child({ component: 'projector' }),
    registry,
    partitionsConsumedConcurrently: envInt(env, 'PROJECTOR_CONCURRENCY', 3, 1),
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
  return {
    registry,
    scheduler,
    stop: async () => {
      scheduler.stop();
      await projector.stop();
      await relay.stop();
      await sink.close();
      await pool.end();
    },
  };
}
