import { randomUUID } from 'node:crypto';
import { inject } from 'vitest';
import { createDatabaseFromTemplate, createPool, dropDatabase, type Pool } from '@ingest/db';
import { runGateway, type RunningGateway } from '@ingest/gateway';
import { createKafka, ensureTopics, readKafkaSecurity, topicPlan, type TopicNames } from '@ingest/kafka';
import { runProjector, type RunningProjector } from '@ingest/projector';
import { type Logger } from '@ingest/runtime';
import { silentLogger } from '@ingest/runtime/testing';

export const INGEST_SECRET = 'test-ingest-secret';
export const CRON_SECRET = 'test-cron-secret';
/**
 * The projectors' fetch wait in tests: a stop waits out the fetch in flight (kafkajs' default is
 * 5 s), and the integration tier stops dozens of projectors. Fetches still return at once when
 * commands arrive, so only the stops get shorter.
 */
export const TEST_FETCH_WAIT_MS = 250;

export interface TestPipeline {
  id: string;
  databaseUrl: string;
  topics: TopicNames;
  brokers: string[];
  /** Superuser pool on the test database, for assertions. */
  db: Pool;
  env: NodeJS.ProcessEnv;
  gateways: RunningGateway[];
  projector: RunningProjector | null;
  url(i?: number): string;
  startGateway(extraEnv?: NodeJS.ProcessEnv): Promise<RunningGateway>;
  startProjector(): Promise<RunningProjector>;
  stopProjector(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * A whole pipeline for one test file, on the real broker and database, isolated by a random
 * suffix on its database, topics and consumer group (STYLE.md). The services are wired by the
 * same runGateway/runProjector that main.ts uses.
 */
export async function startPipeline(
  opts: {
    env?: NodeJS.ProcessEnv;
    gateway?: boolean;
    projector?: boolean;
    /** How the services reach the test database (e.g. through a TCP proxy a test can cut); assertions go direct. */
    serviceDatabaseUrl?: (direct: string) => string;
    /** Another Kafka than the shared one (a secured broker): its bootstrap and the client settings (KAFKA_SSL…, KAFKA_SASL_…) the services get. */
    kafka?: { brokers: string[]; env: NodeJS.ProcessEnv };
    /** The services' logger (default silent). */
    log?: Logger;
  } = {},
): Promise<TestPipeline> {
  const id = randomUUID().slice(0, 8);
  const brokers = opts.kafka?.brokers ?? inject('kafkaBrokers');
  const databaseUrl = await createDatabaseFromTemplate(inject('adminDatabaseUrl'), `ingest_test_${id}`, inject('templateDatabase'));
  const topics: TopicNames = {
    commands: `test.${id}.commands`,
    audit: `test.${id}.audit`,
    stockZero: `test.${id}.stock-zero`,
    stockRestored: `test.${id}.stock-restored`,
  };
  await ensureTopics(
    createKafka({ brokers, security: readKafkaSecurity(opts.kafka?.env ?? {}), clientId: `test-setup-${id}` }),
    topicPlan(topics, 3),
  );
  const env: NodeJS.ProcessEnv = {
    DATABASE_URL: opts.serviceDatabaseUrl ? opts.serviceDatabaseUrl(databaseUrl) : databaseUrl,
    KAFKA_BROKERS: brokers.join(','),
    COMMANDS_TOPIC: topics.commands,
    AUDIT_TOPIC: topics.audit,
    STOCK_ZERO_TOPIC: topics.stockZero,
    STOCK_RESTORED_TOPIC: topics.stockRestored,
    PROJECTOR_GROUP_ID: `test-${id}-projector`,
    INGEST_SECRET,
    CRON_SECRET,
    PORT: '0',
    HOST: '127.0.0.1',
    // Retention runs when a test asks for it (pruner.runOnce), not in the middle of its assertions.
    PRUNE_INTERVAL: '1h',
    // Likewise the table upkeep (upkeep.runOnce): no VACUUM or ANALYZE between a test's steps.
    DB_UPKEEP_INTERVAL: '1h',
    // A test's gateway stops at once; the drain's linger has its own test (drain.unit.test.ts) and
    // npm run test:deploy's rolling restart.
    SHUTDOWN_LINGER: '0',
    ...opts.kafka?.env,
    ...opts.env,
  };
  const db = createPool({ connectionString: databaseUrl, max: 4 });
  const log = opts.log ?? silentLogger();
  const p: TestPipeline = {
    id,
    databaseUrl,
    topics,
    brokers,
    db,
    env,
    gateways: [],
    projector: null,
    url: (i = 0) => `http://127.0.0.1:${p.gateways[i]?.port ?? 0}`,
    startGateway: async (extra = {}) => {
      const g = await runGateway({ ...env, ...extra }, log);
      p.gateways.push(g);
      return g;
    },
    startProjector: async () => {
      p.projector = await runProjector(env, log, { fetchWaitMs: TEST_FETCH_WAIT_MS });
      return p.projector;
    },
    stopProjector: async () => {
      await p.projector?.stop();
      p.projector = null;
    },
    stop: async () => {
      for (const g of p.gateways) await g.stop().catch(() => {});
      await p.stopProjector().catch(() => {});
      await db.end();
      await dropDatabase(inject('adminDatabaseUrl'), `ingest_test_${id}`).catch(() => {});
    },
  };
  if (opts.projector !== false) await p.startProjector();
  if (opts.gateway !== false) await p.startGateway();
  return p;
}

// One HTTP reader for the unit and integration tiers (the gateway's test module).
export { fetchAnswer, getAnswer as get, postJson as post, type HttpAnswer as HttpResult } from '@ingest/gateway/testing';

/** Polls until the condition holds (never a fixed sleep). */
export async function waitFor<T>(fn: () => Promise<T | undefined | null | false>, timeoutMs = 15000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
