// Operator CLI for the local Kafka broker.
//   pnpm kafka start    acquire a broker (KAFKA_BROKERS / one already on 127.0.0.1:9092 / testcontainers /
//                       the project's own broker from Maven Central jars, data in .data/kafka), print its
//                       address, stay in the foreground until Ctrl-C / SIGTERM, then stop it cleanly.
//                       KAFKA_VERSION=4.4.0 runs that version instead of 3.9.2 (data in .data/kafka-4.4.0)
//   pnpm kafka status   is a broker reachable on KAFKA_BROKERS or 127.0.0.1:9092? (exit 0 yes, 1 no)
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { acquireKafka, brokersFromEnv, DEFAULT_LOCAL_BROKERS, probeKafka } from '@ingest/devstack';
import { describeKafkaSecurity, readKafkaSecurity } from '@ingest/kafka';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const log = (msg: string) => console.error(`[kafka] ${msg}`);

async function start(): Promise<number> {
  const kafka = await acquireKafka({ dataDir: join(root, '.data', 'kafka'), log });
  const address = kafka.brokers.join(',');
  if (kafka.source === 'env' || kafka.source === 'running') {
    const where = kafka.source === 'env' ? 'KAFKA_BROKERS' : 'an already running broker';
    const ok = kafka.source === 'running' || (await probeKafka(kafka.brokers, 3000, readKafkaSecurity(process.env))).ok;
    console.log(`Kafka: ${where} at ${address}${ok ? '' : ' (NOT reachable)'}; nothing to start.`);
    return ok ? 0 : 1;
  }
  console.log(
    `Kafka${kafka.version ? ` ${kafka.version}` : ''} ready at ${address} (${kafka.source}). Use KAFKA_BROKERS=${address}${kafka.brokers.length === 1 ? ' (single broker: KAFKA_REPLICATION_FACTOR=1 KAFKA_MIN_INSYNC_REPLICAS=1)' : ''}. Ctrl-C to stop.`,
  );

  // If our parent goes away without a signal (killed with SIGKILL), stop the broker rather than orphan it.
  const parent = process.ppid;
  let watch: NodeJS.Timeout | undefined;
  const outcome = await new Promise<'signal' | 'orphaned' | 'exited'>((r) => {
    process.once('SIGINT', () => r('signal'));
    process.once('SIGTERM', () => r('signal'));
    process.once('SIGHUP', () => r('signal'));
    void kafka.exited?.then(() => r('exited'));
    watch = setInterval(() => process.ppid !== parent && r('orphaned'), 1000);
  });
  clearInterval(watch);
  if (outcome === 'exited') {
    // a cluster's nodes each have theirs, in node-<id>/ below the data dir
    log(`the broker exited on its own; see broker.out under ${kafka.dataDir ? relative(root, kafka.dataDir) : '.data/'}`);
    return 1;
  }
  log(outcome === 'orphaned' ? 'parent process went away; stopping...' : 'stopping...');
  await kafka.release();
  log('stopped');
  return 0;
}

async function status(): Promise<number> {
  const brokers = brokersFromEnv() ?? DEFAULT_LOCAL_BROKERS;
  const security = brokersFromEnv() ? readKafkaSecurity(process.env) : undefined;
  const r = await probeKafka(brokers, 3000, security);
  const how = security ? `, ${describeKafkaSecurity(security)}` : '';
  if (r.ok) console.log(`Kafka reachable at ${brokers.join(',')} (cluster ${r.clusterId}${how})`);
  else console.log(`Kafka NOT reachable at ${brokers.join(',')}: ${r.error}`);
  return r.ok ? 0 : 1;
}

const cmd = process.argv[2];
const commands: Record<string, () => Promise<number>> = { start, status };
const run = cmd ? commands[cmd] : undefined;
if (!run) {
  console.error('usage: pnpm kafka <start|status>');
  process.exit(2);
}
try {
  process.exitCode = await run();
} catch (err) {
  console.error(`[kafka] ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
}
