// The suite's own infrastructure: a Kafka broker it may kill (never the shared one on 9092), a
// migrated template database, and per scenario a database copy, topics, a consumer group and a
// TCP proxy in front of PostgreSQL.
import { randomUUID } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { createDatabaseFromTemplate, dropDatabase, ensureDatabase, migrate, withDatabase } from '@ingest/db';
import { REPO_ROOT, startKafkaBroker, startKafkaCluster, type KafkaBroker, type KafkaClusterNode } from '@ingest/devstack';
import {
  createKafka,
  ensureTopics,
  PRODUCTION_REPLICATION,
  readKafkaSecurity,
  SINGLE_BROKER_REPLICATION,
  topicPlan,
  type Kafka,
  type TopicNames,
  type TopicReplication,
} from '@ingest/kafka';
import { CRON_SECRET, INGEST_SECRET } from './load.ts';
import { startTcpProxy, type TcpProxy } from '../support/tcpProxy.ts';

// The same TLS/SASL settings as the services, for a KAFKA_BROKERS cluster that needs them.
const kafkaSecurity = readKafkaSecurity(process.env);

export const ADMIN_DATABASE_URL = process.env['FAULTS_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const KAFKA_PORT = Number(process.env['FAULTS_KAFKA_PORT'] ?? 19092);
export const KAFKA_CONTROLLER_PORT = Number(process.env['FAULTS_KAFKA_CONTROLLER_PORT'] ?? 19093);
export const PARTITIONS = 6;

export interface OwnBroker {
  brokers: string[];
  pid(): number;
  /** SIGKILL the broker (every node of a cluster); resolves once the processes are gone. */
  kill9(): Promise<void>;
  /** Starts it again on the same data dir and ports; resolves when it serves. */
  restart(): Promise<number>;
  stop(): Promise<void>;
  /** `--cluster`: the nodes of the suite's own three-node cluster, one by one. */
  nodes?: KafkaClusterNode[];
  /** Topics of the scenarios: 1/1 on one broker, 3/2 on the cluster. */
  replication: TopicReplication;
}

/** `npm run test:faults -- --cluster`: a three-node KRaft cluster of the suite's own (never the shared one). */
export async function startOwnCluster(size: number, log: (m: string) => void): Promise<OwnBroker> {
  const cluster = await startKafkaCluster({
    dataDir: join(REPO_ROOT, '.data', 'faults-kafka-cluster'),
    size,
    basePort: KAFKA_PORT,
    log,
    fresh: true,
  });
  return {
    brokers: cluster.brokers,
    pid: () => cluster.nodes[0]!.pid(),
    kill9: async () => void (await Promise.all(cluster.nodes.map((n) => n.kill9()))),
    restart: async () => {
      const t0 = Date.now();
      await Promise.all(cluster.nodes.filter((n) => !n.running()).map((n) => n.restart()));
      return Date.now() - t0;
    },
    stop: () => cluster.stop(),
    nodes: cluster.nodes,
    replication: size >= 3 ? PRODUCTION_REPLICATION : { replicationFactor: size, minInsyncReplicas: 1 },
  };
}

export async function startOwnBroker(log: (m: string) => void): Promise<OwnBroker> {
  const dataDir = join(REPO_ROOT, '.data', 'faults-kafka');
  rmSync(dataDir, { recursive: true, force: true }); // a fresh cluster per suite run (nothing to recover)
  const start = () => startKafkaBroker({ dataDir, port: KAFKA_PORT, controllerPort: KAFKA_CONTROLLER_PORT, log, timeoutMs: 90_000 });
  let broker: KafkaBroker = await start();
  return {
    brokers: broker.brokers,
    pid: () => broker.pid,
    kill9: async () => {
      process.kill(broker.pid, 'SIGKILL');
      await Promise.race([broker.exited, new Promise((r) => setTimeout(r, 10_000))]);
    },
    restart: async () => {
      const t0 = Date.now();
      broker = await start();
      return Date.now() - t0;
    },
    stop: () => broker.stop(),
    replication: SINGLE_BROKER_REPLICATION,
  };
}

export interface Template {
  name: string;
  drop(): Promise<void>;
}

export async function migrateTemplate(): Promise<Template> {
  const name = `faults_template_${process.pid}`;
  const scratch = `faults_build_${process.pid}`;
  await ensureDatabase(withDatabase(ADMIN_DATABASE_URL, 'postgres'));
  const buildUrl = await createDatabaseFromTemplate(ADMIN_DATABASE_URL, scratch, 'template1');
  await migrate(buildUrl);
  await createDatabaseFromTemplate(ADMIN_DATABASE_URL, name, scratch);
  await dropDatabase(ADMIN_DATABASE_URL, scratch);
  return { name, drop: () => dropDatabase(ADMIN_DATABASE_URL, name) };
}

/** Everything one scenario runs on: its own database (through a proxy), topics and group. */
export interface Stack {
  id: string;
  dbName: string;
  /** Direct superuser URL (checks, the parked CLI): never through the proxy. */
  directUrl: string;
  /** What the services use: through the proxy, so an outage is a cut of the proxy. */
  proxiedUrl: string;
  db: pg.Pool;
  proxy: TcpProxy;
  kafka: Kafka;
  topics: TopicNames;
  groupId: string;
  /** Base environment of every service of the scenario. */
  env: NodeJS.ProcessEnv;
  dispose(keepDatabase: boolean): Promise<void>;
}

export async function createStack(
  scenario: string,
  template: Template,
  brokers: string[],
  logDir: string,
  replication: TopicReplication = SINGLE_BROKER_REPLICATION,
): Promise<Stack> {
  const id = `${scenario.replace(/[^a-z0-9]/g, '')}${randomUUID().slice(0, 6)}`;
  mkdirSync(logDir, { recursive: true });
  const dbName = `faults_${id}`;
  const directUrl = await createDatabaseFromTemplate(ADMIN_DATABASE_URL, dbName, template.name);
  const proxy = await startTcpProxy({ target: { host: '127.0.0.1', port: Number(new URL(ADMIN_DATABASE_URL).port || 5432) } });
  const proxied = new URL(directUrl);
  proxied.hostname = '127.0.0.1';
  proxied.port = String(proxy.port);
  const topics: TopicNames = {
    commands: `faults.${id}.commands`,
    audit: `faults.${id}.audit`,
    stockZero: `faults.${id}.stock-zero`,
    stockRestored: `faults.${id}.stock-restored`,
  };
  const kafka = createKafka({ brokers, security: kafkaSecurity, clientId: `faults-${id}` });
  await ensureTopics(kafka, topicPlan(topics, PARTITIONS, replication));
  const groupId = `faults-${id}-projector`;
  const db = new pg.Pool({ connectionString: directUrl, max: 4 });
  db.on('error', () => {});
  const inherited = { ...process.env };
  for (const k of ['FAILPOINTS', 'DATABASE_URL', 'KAFKA_BROKERS', 'PORT', 'HOST', 'PROJECTOR_METRICS_PORT', 'DB_ROLE']) delete inherited[k];
  const env: NodeJS.ProcessEnv = {
    ...inherited,
    DATABASE_URL: proxied.toString(),
    KAFKA_BROKERS: brokers.join(','),
    COMMANDS_TOPIC: topics.commands,
    AUDIT_TOPIC: topics.audit,
    STOCK_ZERO_TOPIC: topics.stockZero,
    STOCK_RESTORED_TOPIC: topics.stockRestored,
    PROJECTOR_GROUP_ID: groupId,
    INGEST_SECRET,
    CRON_SECRET,
    LOG_LEVEL: 'info',
    KAFKAJS_NO_PARTITIONER_WARNING: '1',
    // The daily job would append commands of its own in the middle of the checks.
    DAILY_SNAPSHOT_CHECK_MS: String(60 * 60 * 1000),
  };
  return {
    id,
    dbName,
    directUrl,
    proxiedUrl: proxied.toString(),
    db,
    proxy,
    kafka,
    topics,
    groupId,
    env,
    dispose: async (keepDatabase) => {
      await db.end().catch(() => {});
      await proxy.stop();
      if (keepDatabase) return; // a failed scenario keeps its database and topics for reading
      const admin = kafka.admin();
      await admin
        .connect()
        .then(() => admin.deleteTopics({ topics: Object.values(topics), timeout: 5000 }))
        .catch(() => {})
        .finally(() => void admin.disconnect().catch(() => {}));
      await dropDatabase(ADMIN_DATABASE_URL, dbName).catch(() => {});
    },
  };
}
