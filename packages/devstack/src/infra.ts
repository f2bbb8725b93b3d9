import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureDatabase, migrate } from '@ingest/db';
import { createKafka, ensureTopics, topicPlan } from '@ingest/kafka';
import { readCommonConfig } from '@ingest/runtime';
import { acquireKafka, type AcquiredKafka } from './acquireKafka.ts';

export const REPO_ROOT = fileURLToPath(new URL('../../..', import.meta.url));

export interface PreparedInfra {
  /** The environment to run the services with (KAFKA_BROKERS filled in). */
  env: NodeJS.ProcessEnv;
  kafka: AcquiredKafka;
  databaseUrl: string;
  release(): Promise<void>;
}

/**
 * Everything the pipeline needs before its services start: a Kafka broker (KAFKA_BROKERS wins,
 * else the project's own), the database (created when missing) migrated, and the topics.
 */
export async function prepareInfra(env: NodeJS.ProcessEnv, log: (msg: string) => void): Promise<PreparedInfra> {
  const kafka = await acquireKafka({ dataDir: join(REPO_ROOT, '.data', 'kafka'), log });
  try {
    const withKafka = { ...env, KAFKA_BROKERS: kafka.brokers.join(',') };
    const common = readCommonConfig(withKafka);
    if ((await ensureDatabase(common.databaseUrl)) === 'created') log(`created database ${new URL(common.databaseUrl).pathname.slice(1)}`);
    await migrate(common.databaseUrl, log);
    const created = await ensureTopics(
      createKafka({ brokers: common.kafkaBrokers, clientId: 'ingest-setup' }),
      topicPlan(common.topics, common.kafkaPartitions),
    );
    if (created.length) log(`created topics ${created.join(', ')}`);
    return { env: withKafka, kafka, databaseUrl: common.databaseUrl, release: () => kafka.release() };
  } catch (err) {
    await kafka.release();
    throw err;
  }
}
