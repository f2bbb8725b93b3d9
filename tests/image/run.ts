// `npm run test:image` (not part of `npm test`): the image's processes as containers against the
// local Kafka and PostgreSQL, configured from deploy/k8s (pods.ts), end to end:
//   1. the image of the current sources (built when missing, as `npm run image` does) and its checks
//   2. setup: the Job's steps in order (migrate, then topics --apply), each a container run to its end
//   3. a projector and a gateway container, until both answer /readyz 200
//   4. every kind of write over HTTP with its expected counts, and the stock_zero events on Kafka
//   5. drain: SIGTERM to a projector and then a gateway while a load is in flight (drain.ts)
// It prints a summary and exits 1 on any failure. Containers are removed on exit; the database
// ingest_image_test is kept when the run fails (the next run starts by dropping it).
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dropDatabase, withDatabase } from '@ingest/db';
import { acquireKafka, type AcquiredKafka } from '@ingest/devstack';
import { createKafka } from '@ingest/kafka';
import { DEFAULT_DATABASE_URL } from '@ingest/runtime';
import { checkImage } from '../../scripts/image/check.ts';
import { ensureHostTools } from '../../scripts/image/hostTools.ts';
import { megabytes } from '../../scripts/image/podman.ts';
import { REPO } from '../../scripts/image/proc.ts';
import { ensureServiceImage } from '../../scripts/image/service.ts';
import { Container, removeRunContainers } from './containers.ts';
import { BASE_AVAILABLE, drainUnderLoad, seedShops, type DrainResult } from './drain.ts';
import { readStockEvents, type StockEventReader } from './events.ts';
import { readManifests, runSpec, type PodContext } from './pods.ts';
import { writeEveryKind, type Gateway } from './writes.ts';

const DATABASE = 'ingest_image_test';
const RATE = Number(process.env['IMAGE_TEST_RATE'] ?? 20);
const runId = randomBytes(3).toString('hex');
const t0 = Date.now();
const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const say = (msg: string) => void process.stderr.write(`[test:image ${secs(Date.now() - t0)}] ${msg}\n`);
const summary: string[] = [];
const failures: string[] = [];
const line = (label: string, text: string) => summary.push(`${label.padEnd(9)} ${text}`);

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen({ host: '127.0.0.1', port: 0 }, () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

const adminUrl = process.env['DATABASE_URL'] ?? DEFAULT_DATABASE_URL;
const databaseUrl = withDatabase(adminUrl, DATABASE);
const logDir = join(REPO, '.data', 'image-test', runId);
const volumesDir = mkdtempSync(join(tmpdir(), 'ingest-image-test-'));
const containers: Container[] = [];
let kafka: AcquiredKafka | undefined;
let events: StockEventReader | undefined;
let topicNames: string[] = [];

async function main(): Promise<void> {
  ensureHostTools();
  const image = ensureServiceImage();
  const check = checkImage(image.ref);
  failures.push(...check.failures.map((f) => `image: ${f}`));
  const checked = check.failures.length ? `${check.failures.length} check(s) failed` : 'no development package, operator CLIs run';
  line('image', `${image.ref}  ${megabytes(image.bytes)}; ${check.packages} packages, ${checked}`);

  kafka = await acquireKafka({ dataDir: join(REPO, '.data', 'kafka-image-test'), log: say });
  say(`Kafka ${kafka.brokers.join(',')} (${kafka.source}), PostgreSQL ${new URL(adminUrl).host}, database ${DATABASE}, run ${runId}`);
  await dropDatabase(adminUrl, DATABASE);
  mkdirSync(logDir, { recursive: true });

  const manifests = readManifests();
  const config = manifests.configMaps.get('ingest-config') ?? {};
  const topicOf = (key: string) => {
    if (!config[key]) throw new Error(`ConfigMap ingest-config of ${manifests.dir} has no ${key}`);
    return `image-test.${runId}.${config[key]}`;
  };
  const topics = {
    commands: topicOf('COMMANDS_TOPIC'),
    audit: topicOf('AUDIT_TOPIC'),
    stockZero: topicOf('STOCK_ZERO_TOPIC'),
    stockRestored: topicOf('STOCK_RESTORED_TOPIC'),
  };
  topicNames = Object.values(topics);
  const groupId = `image-test-${runId}-projector`;
  const secrets = { ingest: `image-test-ingest-${runId}`, cron: `image-test-cron-${runId}` };
  // What an overlay and the cluster provide, for this machine: the ConfigMap and env of the YAML stay as they are otherwise.
  const ctx: PodContext = {
    manifests,
    secrets: {
      'ingest-secrets': {
        'ingest-secret': secrets.ingest,
        'cron-secret': secrets.cron,
        'api-key-pepper': `image-test-pepper-${runId}-0123456789abcdef`,
        'database-url': databaseUrl,
        'migrate-database-url': databaseUrl,
      },
    },
    volumesDir,
    overrides: {
      KAFKA_BROKERS: kafka.brokers.join(','),
      // One broker, as the dev overlay says.
      KAFKA_REPLICATION_FACTOR: '1',
      KAFKA_MIN_INSYNC_REPLICAS: '1',
      COMMANDS_TOPIC: topics.commands,
      AUDIT_TOPIC: topics.audit,
      STOCK_ZERO_TOPIC: topics.stockZero,
      STOCK_RESTORED_TOPIC: topics.stockRestored,
      PROJECTOR_GROUP_ID: groupId,
      // The host's network is shared with everything else on the machine.
      HOST: '127.0.0.1',
    },
    freePort,
  };
  const container = async (workload: string, name: string, role: string) => {
    const c = new Container(runId, role, await runSpec(ctx, workload, name), image.ref);
    containers.push(c);
    return c;
  };

  // 2. The setup Job: init containers, then containers, each to its end.
  const job = manifests.workloads.get('Job/ingest-setup');
  if (!job) throw new Error(`${manifests.dir} has no Job ingest-setup`);
  const steps = [...(job['spec'].template.spec.initContainers ?? []), ...job['spec'].template.spec.containers].map((c: any) =>
    String(c.name),
  );
  const setupTimes: string[] = [];
  for (const step of steps) {
    const c = await container('Job/ingest-setup', step, `setup-${step}`);
    say(`setup: ${c.spec.command.join(' ')}`);
    const r = await c.runToEnd();
    setupTimes.push(`${c.spec.command.slice(1).join(' ')} exit ${r.exitCode} in ${secs(r.ms)}`);
    if (r.exitCode !== 0) throw new Error(`setup step ${step} exited ${r.exitCode}:\n${r.output.trim().split('\n').slice(-20).join('\n')}`);
  }
  line('setup', setupTimes.join('; '));

  // 3. The services.
  const gatewayApi = (c: Container): Gateway => ({ port: c.spec.readiness!.port, ingestSecret: secrets.ingest, cronSecret: secrets.cron });
  const startService = async (workload: string, name: string, role: string) => {
    const c = await container(workload, name, role);
    await c.start();
    const ms = await c.waitReady();
    say(`${role} ready in ${secs(ms)} (readiness ${c.spec.readiness!.path} on ${c.spec.readiness!.port})`);
    return { c, ms };
  };
  const projector1 = await startService('Deployment/ingest-projector', 'projector', 'projector-1');
  const gateway1 = await startService('Deployment/ingest-gateway', 'gateway', 'gateway-1');
  line('ready', `projector ${secs(projector1.ms)}, gateway ${secs(gateway1.ms)} (/readyz 200, read-only, uid 1000, no capabilities)`);

  // 4. Every kind of write, and the stock events.
  events = await readStockEvents(kafka.brokers, topics, runId);
  const shop = `image-test-${runId}.example`;
  const writes = await writeEveryKind(gatewayApi(gateway1.c), shop, config['BUSINESS_TIMEZONE'] ?? 'Asia/Tokyo');
  for (const w of writes.checks.filter((c) => !c.ok)) failures.push(`write ${w.name}: ${w.detail}`);
  const missing = await events.waitFor(writes.stockEvents, shop, 30_000);
  for (const m of missing) failures.push(`no ${m.topic} event for ${m.barcode} at ${m.locationId} seq ${m.seq} within 30 s`);
  const zero = events.events.filter((e) => e.shop === shop && e.topic === 'stockZero');
  for (const e of zero.filter((x) => x.eventType !== 'stock_zero')) failures.push(`stock-zero topic carried a ${e.eventType} event`);
  line(
    'writes',
    `${writes.checks.length - writes.checks.filter((c) => !c.ok).length}/${writes.checks.length} answers as expected; ` +
      `${zero.length} stock_zero event(s) on ${topics.stockZero}${missing.length ? `, ${missing.length} missing` : ''}`,
  );

  // 5. Drain.
  const shops = await seedShops(gatewayApi(gateway1.c), [`load-a-${runId}.example`, `load-b-${runId}.example`]);
  say(`load of ${RATE} requests/s on ${shops.length} shops (INV levels at ${BASE_AVAILABLE})`);
  const drain = await drainUnderLoad({
    runId,
    shops,
    gateway1: gateway1.c,
    gateway1Api: gatewayApi(gateway1.c),
    projector1: projector1.c,
    newGateway: async () => {
      const g = await startService('Deployment/ingest-gateway', 'gateway', 'gateway-2');
      return { container: g.c, api: gatewayApi(g.c) };
    },
    newProjector: async () => (await startService('Deployment/ingest-projector', 'projector', 'projector-2')).c,
    brokers: kafka.brokers,
    topics,
    groupId,
    databaseUrl,
    ratePerSec: RATE,
    say,
  });
  for (const c of drain.survivors) {
    const stopped = await c.stop();
    drain.stops.push({ role: c.role, inFlight: 0, ...stopped });
  }
  report(drain);
}

function report(d: DrainResult): void {
  const sent = d.load.records.filter((r) => r.error !== 'ECONNREFUSED');
  const answered = sent.filter((r) => r.status !== null);
  const byStatus = new Map<number, number>();
  for (const r of answered) byStatus.set(r.status!, (byStatus.get(r.status!) ?? 0) + 1);
  const statuses = [...byStatus.entries()]
    .sort(([a], [b]) => a - b)
    .map(([s, k]) => `${k} x ${s}`)
    .join(', ');
  const v = d.verdict;
  line(
    'drain',
    `requests ${sent.length}, answered ${answered.length} (${statuses}), refused at connect ${d.refused}, ` +
      `lost ${v.lost.length}, doubled ${v.doubled.length}; log projected in ${secs(d.quiescentMs)}`,
  );
  for (const s of d.stops) {
    line(
      '',
      `${s.role}: SIGTERM -> exit ${s.exitCode} in ${secs(s.drainMs)}${s.inFlight ? ` (${s.inFlight} requests in flight)` : ' (idle)'}`,
    );
    if (s.exitCode !== 0) failures.push(`${s.role} exited ${s.exitCode} on SIGTERM (137: killed after its grace period)`);
  }
  for (const i of v.info) line('', i);
  failures.push(...v.lost.map((l) => `lost: ${l}`), ...v.doubled.map((l) => `doubled: ${l}`), ...v.failures);
}

async function cleanup(ok: boolean): Promise<void> {
  for (const c of containers) await c.saveLog(logDir).catch(() => {});
  await removeRunContainers(runId).catch((err: unknown) => say(`could not remove the containers: ${String(err)}`));
  await events?.close().catch(() => {});
  if (kafka && topicNames.length) {
    const admin = createKafka({ brokers: kafka.brokers, clientId: `image-test-${runId}-cleanup` }).admin();
    await admin
      .connect()
      .then(() => admin.deleteTopics({ topics: topicNames, timeout: 10_000 }))
      .catch(() => {})
      .finally(() => void admin.disconnect().catch(() => {}));
  }
  if (ok) await dropDatabase(adminUrl, DATABASE).catch(() => {});
  await kafka?.release().catch(() => {});
  rmSync(volumesDir, { recursive: true, force: true });
}

let cleaning: Promise<void> | undefined;
for (const sig of ['SIGINT', 'SIGTERM'] as const)
  process.on(sig, () => {
    say(`${sig}: removing the containers of run ${runId}`);
    void (cleaning ??= cleanup(false)).finally(() => process.exit(130));
  });

try {
  await main();
} catch (err) {
  failures.push(err instanceof Error ? err.message : String(err));
}
const ok = failures.length === 0;
await (cleaning ??= cleanup(ok));
console.log(`\ntest:image, run ${runId} (logs: .data/image-test/${runId}/)`);
for (const s of summary) console.log(s);
console.log(`${'result'.padEnd(9)} ${ok ? 'PASS' : `FAIL (${failures.length})`} in ${secs(Date.now() - t0)}`);
for (const f of failures) console.log(`  - ${f}`);
if (!ok) console.log(`  the database ${DATABASE} is kept for reading`);
process.exitCode = ok ? 0 : 1;
