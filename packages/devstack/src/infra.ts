import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureDatabase, migrate } from '@ingest/db';
import {
  checkTopics,
  createKafka,
  describeDrift,
  describeKafkaSecurity,
  ensureTopics,
  fitReplication,
  readKafkaSecurity,
  readTopicReplication,
  topicPlan,
} from '@ingest/kafka';
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
    const kafkaSecurity = readKafkaSecurity(withKafka);
    if ((await ensureDatabase(common.databaseUrl)) === 'created') log(`created database ${new URL(common.databaseUrl).pathname.slice(1)}`);
    await migrate(common.databaseUrl, log);
    // Replication from the caller's environment: KAFKA_BROKERS unset means the dev stack's own broker (1 and 1).
    const admin = createKafka({ brokers: common.kafkaBrokers, security: kafkaSecurity, clientId: 'ingest-setup' });
    const fitted = await fitReplication(admin, readTopicReplication(env));
    if (fitted.note) log(fitted.note);
    const plan = topicPlan(common.topics, common.kafkaPartitions, fitted.replication);
    if (kafka.source === 'env') log(`Kafka client security: ${describeKafkaSecurity(kafkaSecurity)}`);
    const created = await ensureTopics(admin, plan);
    if (created.length) log(`created topics ${created.join(', ')}`);
    // Existing topics are left as they are; say where they differ from the plan.
    const drift = await checkTopics(admin, plan);
    if (drift.length)
      log(`topics differ from the plan (npm run topics -- --apply fixes what Kafka allows):\n  ${drift.map(describeDrift).join('\n  ')}`);
    return { env: withKafka, kafka, databaseUrl: common.databaseUrl, release: () => kafka.release() };
  } catch (err) {
    await kafka.release();
    throw err;
  }
}
