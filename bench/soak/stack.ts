// The soak's deployment: its own broker (or three-node cluster) on ports of its own, the fault
// suite's stack (database from a migrated template, topics, group, PostgreSQL behind a proxy) and its
// service processes (2 gateways, 2 projectors, each a real `node services/*/src/main.ts`).
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT, startKafkaBroker, startKafkaCluster } from '@ingest/devstack';
import { PRODUCTION_REPLICATION, SINGLE_BROKER_REPLICATION, type TopicReplication } from '@ingest/kafka';
import { createStack, migrateTemplate, type Stack, type Template } from '../../tests/faults/infra.ts';
import { serviceHost, type Service, type ServiceHost } from '../../tests/faults/procs.ts';
import { setupShops } from '../../tests/faults/setupShops.ts';
import { post } from '../../tests/faults/client.ts';
import { CATALOGUE_SIZE, type SoakShop } from './requests.ts';

export interface SoakBroker {
  brokers: string[];
  /** Where its log segments are (what "Kafka log size" measures). */
  dataDir: string;
  replication: TopicReplication;
  stop(): Promise<void>;
}

/** Not 9092 (the shared broker), 19092 (the fault suite's), 29092-29099 nor 39192. */
export const SOAK_KAFKA_PORT = Number(process.env['SOAK_KAFKA_PORT'] ?? 19492);

export async function startSoakBroker(cluster: boolean, log: (m: string) => void): Promise<SoakBroker> {
  if (cluster) {
    const dataDir = join(REPO_ROOT, '.data', 'soak-kafka-cluster');
    const c = await startKafkaCluster({ dataDir, size: 3, basePort: SOAK_KAFKA_PORT, log, fresh: true });
    return { brokers: c.brokers, dataDir, replication: PRODUCTION_REPLICATION, stop: () => c.stop() };
  }
  const dataDir = join(REPO_ROOT, '.data', 'soak-kafka');
  rmSync(dataDir, { recursive: true, force: true }); // each soak starts from an empty log
  const b = await startKafkaBroker({ dataDir, port: SOAK_KAFKA_PORT, controllerPort: SOAK_KAFKA_PORT + 1, log, timeoutMs: 90_000 });
  return { brokers: b.brokers, dataDir, replication: SINGLE_BROKER_REPLICATION, stop: () => b.stop() };
}

export interface SoakSettings {
  /** Retention of results, markers and request keys (short, so the pruner works during the soak). */
  retention: string;
  keyTtl: string;
  pruneInterval: string;
  dayLength: string;
  /** Per-shop line budget (SHOP_RATE_LINES_PER_S): a bursting shop runs into it and gets 429s on purpose. */
  shopRateLines: number;
  heapDir: string | null;
}

/** The settings the soak runs the services with (everything else is the deployed default). */
export const serviceEnv = (s: SoakSettings): NodeJS.ProcessEnv => ({
  RESULT_RETENTION: s.retention,
  MARKER_RETENTION: s.retention,
  IDEMPOTENCY_KEY_TTL: s.keyTtl,
  PRUNE_INTERVAL: s.pruneInterval,
  BUSINESS_DAY_LENGTH: s.dayLength,
  DAILY_SNAPSHOT_CHECK_MS: '5000',
  SHOP_RATE_LINES_PER_S: String(s.shopRateLines),
  SHOP_BURST_LINES: String(Math.max(1, s.shopRateLines * 10)),
  // Heap snapshots on SIGUSR2 (--heap-snapshot-every and on a failed verdict), written to heapDir.
  ...(s.heapDir ? { NODE_OPTIONS: `--heapsnapshot-signal=SIGUSR2 --diagnostic-dir=${s.heapDir}` } : {}),
});

export interface Deployment {
  stack: Stack;
  template: Template;
  host: ServiceHost;
  gateways: Service[];
  projectors: Service[];
  shops: SoakShop[];
  dispose(): Promise<void>;
}

export async function deploy(o: {
  broker: SoakBroker;
  runDir: string;
  shops: number;
  env: NodeJS.ProcessEnv;
  note: (m: string) => void;
}): Promise<Deployment> {
  mkdirSync(o.runDir, { recursive: true });
  const template = await migrateTemplate();
  const stack = await createStack('soak', template, o.broker.brokers, o.runDir, o.broker.replication);
  const env = { ...stack.env, ...o.env };
  const host = serviceHost(o.runDir, o.note);
  const gateways = [await host.create('gateway', 'gateway-1', env), await host.create('gateway', 'gateway-2', env)];
  const projectors = [await host.create('projector', 'projector-1', env), await host.create('projector', 'projector-2', env)];
  await Promise.all([...gateways, ...projectors].map((s) => s.start({}, 60_000)));
  const names = Array.from({ length: o.shops }, (_, i) => `s${i}-${stack.id}.soak.example`);
  const port = gateways[0]!.port;
  const shops: SoakShop[] = (await setupShops(port, names)).map((s) => ({ ...s, channelId: '', catalogue: [] }));
  await Promise.all(
    shops.map(async (s, i) => {
      const ch = await post(port, '/api/admin/channels', { shop: s.shop, channels: [{ name: 'Web' }] });
      if (ch.status !== 200) throw new Error(`setup: channel of ${s.shop}: ${ch.status} ${ch.text}`);
      s.channelId = ch.body.channels[0].channel_id;
      s.catalogue = Array.from({ length: CATALOGUE_SIZE }, (_, k) => `cat-${i}-${k}`);
      const p = await post(port, '/api/ingest/products', {
        shop: s.shop,
        products: s.catalogue.map((barcode) => ({ barcode, product_name: `Catalogue ${barcode}` })),
      });
      if (p.status !== 200) throw new Error(`setup: catalogue of ${s.shop}: ${p.status} ${p.text}`);
    }),
  );
  o.note(`${shops.length} shops set up on ${stack.dbName}`);
  return {
    stack,
    template,
    host,
    gateways,
    projectors,
    shops,
    dispose: async () => {
      await host.stopAll().catch(() => {});
      await stack.dispose(false).catch(() => {});
      await template.drop().catch(() => {});
    },
  };
}
