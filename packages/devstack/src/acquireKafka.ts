// One way for scripts and tests to get "a Kafka", in this order:
//   1. KAFKA_BROKERS=host:port[,host:port]       use it as is
//   2. a broker already answers on 127.0.0.1:9092  reuse it (e.g. `pnpm kafka start` in another shell)
//   3. KAFKA_PROVIDER=testcontainers              a cp-kafka 7.9 (AK 3.9) KRaft container
//   4. otherwise                                  the project's own broker from Maven Central jars
// KAFKA_CLUSTER_SIZE=3 asks for a three-node cluster instead (2 and 4: a running one must have that size).
// KAFKA_VERSION (3.9.2, 4.4.0) picks the version of what 4. starts; each version keeps its own data dir.
import { setting, settingGiven } from '@ingest/runtime';
import { ensureKafkaJars, startKafkaBroker, isKafkaReachable, type Log } from './kafkaBroker.ts';
import { startKafkaCluster } from './kafkaCluster.ts';
import { probeKafka } from './kafkaProbe.ts';
import { readKafkaVersion, versionedDataDir, type KafkaVersion } from './kafkaVersions.ts';

export type KafkaSource = 'env' | 'running' | 'started' | 'testcontainers';

export interface AcquiredKafka {
  brokers: string[];
  /** Stops what this call started; a no-op for 'env' and 'running'. */
  release(): Promise<void>;
  source: KafkaSource;
  /** For 'started' and 'testcontainers': settles when the broker goes away on its own or is released. */
  exited?: Promise<unknown>;
  /** For 'started': the Kafka version it runs, and the data dir of that version. */
  version?: KafkaVersion;
  dataDir?: string;
}

export const DEFAULT_LOCAL_BROKERS = ['127.0.0.1:9092'];
/** Confluent Platform 7.9.x ships Apache Kafka 3.9.x, the version of the local broker. */
export const TESTCONTAINERS_KAFKA_IMAGE = 'confluentinc/cp-kafka:7.9.1';

const noop = async () => {};

export function brokersFromEnv(env: NodeJS.ProcessEnv = process.env): string[] | undefined {
  const list = (env.KAFKA_BROKERS ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return list.length > 0 ? list : undefined;
}

export async function acquireKafka(opts: { dataDir: string; log?: Log }): Promise<AcquiredKafka> {
  const log = opts.log ?? ((m: string) => console.error(m));
  const fromEnv = brokersFromEnv();
  if (fromEnv) return { brokers: fromEnv, release: noop, source: 'env' };
  const version = readKafkaVersion(); // a wrong value fails here, before anything is probed or started
  const size = setting(process.env, 'KAFKA_CLUSTER_SIZE');
  if (size > 1) return acquireCluster(size, versionedDataDir(`${opts.dataDir}-cluster`, version), version, log);

  if (await isKafkaReachable(DEFAULT_LOCAL_BROKERS, 2000)) {
    noteReused(log);
    return { brokers: [...DEFAULT_LOCAL_BROKERS], release: noop, source: 'running' };
  }

  if (process.env.KAFKA_PROVIDER === 'testcontainers') return startTestcontainersKafka(log);

  await ensureKafkaJars(log, version);
  const dataDir = versionedDataDir(opts.dataDir, version);
  const broker = await startKafkaBroker({ dataDir, log, version });
  return { brokers: broker.brokers, release: broker.stop, source: 'started', exited: broker.exited, version, dataDir };
}

/** A broker already running is used whatever its version: say so when a version was asked for. */
function noteReused(log: Log): void {
  if (settingGiven(process.env, 'KAFKA_VERSION')) {
    const asked = readKafkaVersion();
    log(
      `KAFKA_VERSION=${asked} applies to a broker started here; reusing the Kafka already on ${DEFAULT_LOCAL_BROKERS[0]}, whatever its version (stop it to get ${asked})`,
    );
  }
}

/** A running cluster of that size on the default ports is reused; anything else there is an error, not a silent single broker. */
async function acquireCluster(size: number, dataDir: string, version: KafkaVersion, log: Log): Promise<AcquiredKafka> {
  const running = await probeKafka(DEFAULT_LOCAL_BROKERS, 2000);
  if (running.ok) {
    if (running.brokers.length === size) {
      noteReused(log);
      return { brokers: running.brokers, release: noop, source: 'running' };
    }
    throw new Error(
      `KAFKA_CLUSTER_SIZE=${size}, but a Kafka of ${running.brokers.length} broker(s) already answers on ${DEFAULT_LOCAL_BROKERS[0]}: ` +
        'stop it first, or unset KAFKA_CLUSTER_SIZE to use it',
    );
  }
  await ensureKafkaJars(log, version);
  const cluster = await startKafkaCluster({ dataDir, size, log, version });
  return { brokers: cluster.brokers, release: cluster.stop, source: 'started', exited: cluster.exited, version, dataDir };
}

async function startTestcontainersKafka(log: Log): Promise<AcquiredKafka> {
  const image = process.env.KAFKA_TESTCONTAINERS_IMAGE ?? TESTCONTAINERS_KAFKA_IMAGE;
  const { KafkaContainer } = await import('@testcontainers/kafka'); // heavy; only loaded on this path
  const MiB = 1024 * 1024;
  log(`starting ${image} (KRaft) with testcontainers...`);
  // The image decides the version there; the local broker's versions do not map onto image tags.
  if (settingGiven(process.env, 'KAFKA_VERSION')) log('KAFKA_VERSION does not apply to testcontainers: set KAFKA_TESTCONTAINERS_IMAGE');
  let container;
  try {
    container = await new KafkaContainer(image)
      .withKraft()
      .withEnvironment({
        KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR: '1',
        KAFKA_TRANSACTION_STATE_LOG_NUM_PARTITIONS: '1',
        KAFKA_AUTO_CREATE_TOPICS_ENABLE: 'false',
        KAFKA_NUM_PARTITIONS: '3',
        KAFKA_MESSAGE_MAX_BYTES: String(64 * MiB),
        KAFKA_REPLICA_FETCH_MAX_BYTES: String(64 * MiB),
        KAFKA_FETCH_MAX_BYTES: String(64 * MiB),
        KAFKA_SOCKET_REQUEST_MAX_BYTES: String(100 * MiB),
        KAFKA_LOG_CLEANER_DEDUPE_BUFFER_SIZE: String(16 * MiB),
      })
      .start();
  } catch (err) {
    const msg = err instanceof Error ? err.message : String(err);
    if (/container runtime/i.test(msg)) {
      throw new Error(
        'KAFKA_PROVIDER=testcontainers, but no container runtime (Docker or Podman) was found. ' +
          'Set KAFKA_BROKERS=host:port to use an existing broker, or unset KAFKA_PROVIDER to run ' +
          "the project's own local broker (Java 17+ and Maven, jars from Maven Central).",
        { cause: err },
      );
    }
    throw err;
  }
  const started = container;
  const brokers = [`${started.getHost()}:${started.getMappedPort(9093)}`];
  let released: Promise<void> | undefined;
  let onReleased = () => {};
  const exited = new Promise<void>((r) => (onReleased = r));
  const release = () =>
    (released ??= (async () => {
      await started.stop();
      onReleased();
    })());
  log(`Kafka container ready on ${brokers[0]}`);
  return { brokers, release, source: 'testcontainers', exited };
}
