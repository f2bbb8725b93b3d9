// `npm run test:image` (not part of `npm test`): the image's processes as pods against the local Kafka
// and PostgreSQL, end to end. The pods are those of the kustomize base (deploy/k8s/base) as rendered,
// run by the deployment test's kubelet (tests/deployment: podPlan.ts, kubelet.ts); what an overlay and
// the cluster would give comes from here (`overrides`: the broker, replication 1, the run's topics and
// group, the listening address; the Secrets' values).
//   1. the image of the current sources (built when missing, as `npm run image` does) and its checks
//   2. setup: the Job's containers in order (migrate, then topics --apply), each run to its end
//   3. a projector and a gateway pod, until both are ready as their probes say
//   4. every kind of write over HTTP with its expected counts, and the stock_zero events on Kafka
//   5. drain: a projector and then a gateway stopped while a load is in flight (drain.ts)
// It prints a summary and exits 1 on any failure. Pods are removed on exit; the database
// ingest_image_test is kept when the run fails (the next run starts by dropping it).
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dropDatabase, withDatabase } from '@ingest/db';
import { acquireKafka, type AcquiredKafka } from '@ingest/devstack';
import { createKafka, type TopicNames } from '@ingest/kafka';
import { DEFAULT_DATABASE_URL } from '@ingest/runtime';
import { checkImage } from '../../scripts/image/check.ts';
import { ensureHostTools } from '../../scripts/image/hostTools.ts';
import { megabytes } from '../../scripts/image/podman.ts';
import { REPO } from '../../scripts/image/proc.ts';
import { ensureServiceImage } from '../../scripts/image/service.ts';
import { Rendered, renderOverlay, type Obj } from '../deploy/k8sRender.ts';
import { runContainer, startPod, type RunningPod } from '../deployment/kubelet.ts';
import { planPod, type ContainerPlan, type SecretData } from '../deployment/podPlan.ts';
import { BASE_AVAILABLE } from '../faults/client.ts';
import { CRON_SECRET, INGEST_SECRET } from '../faults/load.ts';
import { freePort } from '../faults/procs.ts';
import { setupShops } from '../faults/setupShops.ts';
import { drainUnderLoad, stopUnderLoad, type DrainResult, type RolePod } from './drain.ts';
import { readStockEvents, type StockEventReader } from './events.ts';
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

const adminUrl = process.env['DATABASE_URL'] ?? DEFAULT_DATABASE_URL;
const databaseUrl = withDatabase(adminUrl, DATABASE);
const logDir = join(REPO, '.data', 'image-test', runId);
const volumesDir = mkdtempSync(join(tmpdir(), 'ingest-image-test-'));
/** Every pod started and not stopped yet: cleanup stops them. */
const running = new Set<RunningPod>();
let kafka: AcquiredKafka | undefined;
let events: StockEventReader | undefined;
let topicNames: string[] = [];

/** What the writes and the load send to a gateway pod. */
const gatewayApi = (p: RolePod): Gateway => ({ port: p.pod.hostPort('http'), ingestSecret: INGEST_SECRET, cronSecret: CRON_SECRET });

/** How a container runs, from its plan: what the summary says of the pods. */
function confinement(c: ContainerPlan): string {
  const caps =
    c.capDrop.includes('ALL') && c.capAdd.length === 0 ? 'no capabilities' : `capabilities -${c.capDrop.join(',')} +${c.capAdd.join(',')}`;
  const memory = c.memoryLimitBytes === undefined ? 'no memory limit' : `memory limit ${c.memoryLimitBytes / 2 ** 20} MiB`;
  return `${c.readOnlyRoot ? 'read-only root' : 'writable root'}, uid ${c.user.uid}, ${caps}, ${memory}`;
}

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

  const rendered = new Rendered('base', renderOverlay(join(REPO, 'deploy/k8s/base')));
  const config: Record<string, string> = rendered.find('ConfigMap', 'ingest-config')['data'] ?? {};
  const topicOf = (key: string) => {
    if (!config[key]) throw new Error(`ConfigMap ingest-config of deploy/k8s/base has no ${key}`);
    return `image-test.${runId}.${config[key]}`;
  };
  const topics: TopicNames = {
    commands: topicOf('COMMANDS_TOPIC'),
    audit: topicOf('AUDIT_TOPIC'),
    stockZero: topicOf('STOCK_ZERO_TOPIC'),
    stockRestored: topicOf('STOCK_RESTORED_TOPIC'),
  };
  topicNames = Object.values(topics);
  const groupId = `image-test-${runId}-projector`;
  const secrets: SecretData = {
    'ingest-secrets': {
      'ingest-secret': INGEST_SECRET,
      'cron-secret': CRON_SECRET,
      'api-key-pepper': `image-test-pepper-${runId}-0123456789abcdef`,
      'database-url': databaseUrl,
      'migrate-database-url': databaseUrl,
    },
  };
  // What an overlay and the cluster provide, for this machine: the manifests' settings stay as they are otherwise.
  const overrides = {
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
  };
  // Container names are the machine's: the run's id keeps them apart from any other run's.
  const plan = (workload: Obj, role: string) => {
    const podName = `image-test-${runId}-${role}`;
    return planPod({ rendered, workload, podName, secrets, dir: join(volumesDir, podName), hostPort: freePort, overrides });
  };

  // 2. The setup Job: init containers, then containers, each to its end.
  const setup = await plan(rendered.find('Job', 'ingest-setup'), 'setup');
  const setupTimes: string[] = [];
  for (const c of [...setup.init, ...setup.containers]) {
    say(`setup: ${c.argv.join(' ')}`);
    const started = Date.now();
    const r = await runContainer(`${setup.name}-${c.name}`, c, image.ref, logDir);
    setupTimes.push(`${c.argv.slice(1).join(' ')} exit ${r.code} in ${secs(Date.now() - started)}`);
    if (r.code !== 0) throw new Error(`setup step ${c.name} exited ${r.code}:\n${r.output.trim().split('\n').slice(-20).join('\n')}`);
  }
  line('setup', setupTimes.join('; '));

  // 3. The services, each pod until its probes say it is ready.
  const start = async (deployment: 'gateway' | 'projector', role: string): Promise<RolePod & { readyMs: number }> => {
    const started = Date.now();
    const pod = await startPod(await plan(rendered.find('Deployment', `ingest-${deployment}`), role), image.ref, logDir, say);
    running.add(pod);
    await pod.waitReady(120_000);
    const readyMs = Date.now() - started;
    say(`${role} ready in ${secs(readyMs)}`);
    return { role, pod, readyMs };
  };
  const projector1 = await start('projector', 'projector-1');
  const gateway1 = await start('gateway', 'gateway-1');
  const gw = gateway1.pod.plan.containers[0]!;
  line(
    'ready',
    `projector ${secs(projector1.readyMs)}, gateway ${secs(gateway1.readyMs)} ` +
      `(${gw.probes.readiness?.['httpGet']?.path ?? 'no readiness probe'} 200; ${confinement(gw)})`,
  );

  // 4. Every kind of write, and the stock events.
  events = await readStockEvents(kafka.brokers, topics, runId);
  const shop = `image-test-${runId}.example`;
  const writes = await writeEveryKind(gatewayApi(gateway1), shop, config['BUSINESS_TIMEZONE'] ?? 'Asia/Tokyo');
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
  const shops = await setupShops(gatewayApi(gateway1).port, [`load-a-${runId}.example`, `load-b-${runId}.example`]);
  say(`load of ${RATE} requests/s on ${shops.length} shops (INV levels at ${BASE_AVAILABLE})`);
  const drain = await drainUnderLoad({
    runId,
    shops,
    gateway1,
    projector1,
    start,
    brokers: kafka.brokers,
    topics,
    groupId,
    databaseUrl,
    ratePerSec: RATE,
    say,
  });
  for (const p of [gateway1, projector1]) running.delete(p.pod);
  for (const p of drain.survivors) {
    drain.stops.push(await stopUnderLoad(p, null, say));
    running.delete(p.pod);
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
  if (d.load.droppedByClient()) failures.push(`${d.load.droppedByClient()} request(s) not sent: the client's in-flight bound was reached`);
  for (const s of d.stops) {
    line(
      '',
      `${s.role}: ${s.preStopMs >= 50 ? `preStop ${secs(s.preStopMs)}, ` : ''}SIGTERM -> exit ${s.code} in ${secs(s.drainMs)}` +
        (s.inFlight ? ` (${s.inFlight} requests in flight)` : ' (idle)'),
    );
    if (s.code !== 0) failures.push(`${s.role} exited ${s.code} on SIGTERM${s.killed ? ' (SIGKILL at the end of its grace period)' : ''}`);
  }
  for (const i of v.info) line('', i);
  failures.push(...v.lost.map((l) => `lost: ${l}`), ...v.doubled.map((l) => `doubled: ${l}`), ...v.failures);
}

async function cleanup(ok: boolean, stopPods: boolean): Promise<void> {
  // On a signal the pods are left to the kubelet's exit hook (removed at once), not stopped one by one.
  if (stopPods) await Promise.all([...running].map((p) => p.terminate().catch(() => {})));
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
    say(`${sig}: removing the pods of run ${runId}`);
    void (cleaning ??= cleanup(false, false)).finally(() => process.exit(130));
  });

try {
  await main();
} catch (err) {
  failures.push(err instanceof Error ? err.message : String(err));
}
const ok = failures.length === 0;
await (cleaning ??= cleanup(ok, true));
console.log(`\ntest:image, run ${runId} (logs: .data/image-test/${runId}/)`);
for (const s of summary) console.log(s);
console.log(`${'result'.padEnd(9)} ${ok ? 'PASS' : `FAIL (${failures.length})`} in ${secs(Date.now() - t0)}`);
for (const f of failures) console.log(`  - ${f}`);
if (!ok) console.log(`  the database ${DATABASE} is kept for reading`);
process.exitCode = ok ? 0 : 1;
