// `npm run test:deploy`: the production overlay run as rendered (docs/deploying.md "The deployment test").
//
//   1. Renders deploy/k8s/overlays/prod with an overlay on top that does only what an operator's own
//      overlay does: the image from this machine's build, the brokers of the cluster it runs against.
//   2. Runs against a three-node Kafka cluster that clients reach only over SASL_SSL (SCRAM-SHA-512)
//      and a PostgreSQL that accepts only TLS with a password, both of its own.
//   3. Creates the Secrets the overlay expects (as files, where the pods mount them), runs the setup
//      Job (migrate, then topics --apply), starts the Deployments' replicas as containers of the built
//      image with exactly the rendered command, environment, user and security settings, and a
//      Service over the gateways' ready endpoints.
//   4. Sends a mixed load through the Service while each Deployment is restarted one pod at a time
//      as Kubernetes does it (maxSurge 1, maxUnavailable 0, readiness, preStop, SIGTERM, grace).
//   5. Checks every answer (200/202, or 503 with Retry-After), nothing lost or doubled in the database
//      and on the audit topic, then runs the operator's commands from the image as an operator would:
//      topics --check, parked list, replay --into scratch, verify.
// Exit 0 only when every check held. Everything it starts, it stops.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import pg from 'pg';
import { REPO_ROOT, startKafkaCluster } from '@ingest/devstack';
import { createKafka, readKafkaSecurity, type TopicNames } from '@ingest/kafka';
import { Rendered, renderOverlay, type Obj } from '../deploy/k8sRender.ts';
import { CRON_SECRET, createLoad, INGEST_SECRET, type Shop } from '../faults/load.ts';
import { checkKeysAcrossGateways } from './keys.ts';
import { freePort } from '../faults/procs.ts';
import { getCommand, verify, waitQuiescent, type Verdict } from '../faults/verify.ts';
import type { Stack } from '../faults/infra.ts';
import { execIn, runContainer, startPod, type RunningPod } from './kubelet.ts';
import { planPod, type SecretData } from './podPlan.ts';
import { startTlsPostgres } from './pgTls.ts';
import { startService } from './service.ts';
import { ensureImage } from './image.ts';
import { rollingRestart, type RestartRecord } from './rollout.ts';
import { setupShops } from './shops.ts';

const t0 = Date.now();
const say = (m: string) => process.stderr.write(`[deploy +${((Date.now() - t0) / 1000).toFixed(1)}s] ${m}\n`);
const RUN = join(REPO_ROOT, '.data', 'deploy-test');
const RATE = Number(process.env['DEPLOY_TEST_RATE'] ?? 15);
const KAFKA_USER = 'ingest';
const KAFKA_PASSWORD = `kafka-${Math.random().toString(36).slice(2)}`;
const DB_LOGIN_PASSWORD = `ingest-${Math.random().toString(36).slice(2)}`;
const API_KEY_PEPPER = `pepper-${Math.random().toString(36).slice(2)}-0123456789abcdef0123456789`;

const failures: string[] = [];
const cleanups: Array<() => Promise<void>> = [];
let stopEndpoints = (): void => {};
/** The pods running now (the rollouts replace them in place). */
const gateways: RunningPod[] = [];
const projectors: RunningPod[] = [];

/** One run at a time: a second one would wipe the first's data directories under it. */
function takeRunLock(): void {
  const lock = join(REPO_ROOT, '.data', 'deploy-test.pid');
  const other = existsSync(lock) ? Number(readFileSync(lock, 'utf8')) : 0;
  if (other && other !== process.pid && alive(other))
    throw new Error(`another deployment test runs (pid ${other}); wait for it or stop it`);
  mkdirSync(join(REPO_ROOT, '.data'), { recursive: true });
  writeFileSync(lock, String(process.pid));
  process.on('exit', () => rmSync(lock, { force: true }));
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function main(): Promise<void> {
  takeRunLock();
  rmSync(RUN, { recursive: true, force: true });
  mkdirSync(join(RUN, 'logs'), { recursive: true });
  const image = ensureImage(say);

  // The secured dependencies.
  const db = await startTlsPostgres({ dir: join(RUN, 'postgres'), port: await freePort(), log: say });
  cleanups.push(() => db.stop());
  const kafkaBase = 29092;
  const cluster = await startKafkaCluster({
    dataDir: join(RUN, 'kafka'),
    size: 3,
    basePort: kafkaBase,
    fresh: true,
    saslSsl: { users: [{ username: KAFKA_USER, password: KAFKA_PASSWORD }] },
    log: say,
  });
  cleanups.push(() => cluster.stop());
  const secured = cluster.saslSsl!;
  say(`Kafka ${cluster.version}: 3 nodes, clients over SASL_SSL on ${secured.brokers.join(',')}`);

  // The login the services use (DB_ROLE ingest_service is granted to it after the migrations).
  const admin = new pg.Pool({ connectionString: db.superUrl('postgres'), max: 2 });
  admin.on('error', (err) => say(`admin connection: ${err.message}`));
  await admin.query(`CREATE ROLE ingest LOGIN PASSWORD '${DB_LOGIN_PASSWORD}'`);

  // The operator's overlay on top of prod: the image built here, the brokers of this cluster.
  const overlayDir = join(RUN, 'overlay');
  mkdirSync(overlayDir, { recursive: true });
  writeFileSync(
    join(overlayDir, 'kustomization.yaml'),
    [
      'apiVersion: kustomize.config.k8s.io/v1beta1',
      'kind: Kustomization',
      'resources:',
      `  - ${relative(overlayDir, join(REPO_ROOT, 'deploy/k8s/overlays/prod'))}`,
      'images:',
      '  - name: registry.example.com/retail-ingestion',
      `    newName: ${image.split(':')[0]}`,
      `    newTag: "${image.split(':')[1]}"`,
      'patches:',
      '  - target: { kind: ConfigMap, name: ingest-config }',
      '    patch: |-',
      '      - op: replace',
      '        path: /data/KAFKA_BROKERS',
      `        value: "${secured.brokers.join(',')}"`,
      '',
    ].join('\n'),
  );
  const rendered = new Rendered('prod+test', renderOverlay(overlayDir));
  const cm: Record<string, string> = rendered.find('ConfigMap', 'ingest-config')['data'];
  const topics: TopicNames = {
    commands: cm['COMMANDS_TOPIC']!,
    audit: cm['AUDIT_TOPIC']!,
    stockZero: cm['STOCK_ZERO_TOPIC']!,
    stockRestored: cm['STOCK_RESTORED_TOPIC']!,
  };
  say(`rendered deploy/k8s/overlays/prod: ${rendered.objects.map((o) => `${o['kind']}/${o['metadata'].name}`).join(', ')}`);

  // The Secrets an operator creates before applying (the overlay's header lists them).
  const sslrootcert = '/etc/ingest/postgres-ca/ca.crt';
  const dbUrl = (user: string, password: string) =>
    `postgres://${user}:${encodeURIComponent(password)}@127.0.0.1:${db.port}/ingest?sslmode=verify-full&sslrootcert=${sslrootcert}`;
  const secrets: SecretData = {
    'ingest-secrets': {
      'ingest-secret': INGEST_SECRET,
      'cron-secret': CRON_SECRET,
      'api-key-pepper': API_KEY_PEPPER,
      'database-url': dbUrl('ingest', DB_LOGIN_PASSWORD),
      'migrate-database-url': dbUrl('postgres', db.password),
    },
    'ingest-kafka': { 'ca.crt': secured.caBundle, username: KAFKA_USER, password: KAFKA_PASSWORD },
    'ingest-postgres-ca': { 'ca.crt': db.caPem },
  };
  let podSeq = 0;
  const plan = async (workload: Obj, podName = `${workload['metadata'].name}-${++podSeq}`) =>
    planPod({ rendered, workload, podName, secrets, dir: join(RUN, 'pods', podName), hostPort: freePort });

  // The setup Job: migrate (init container), then topics --apply; each container to its end.
  const job = rendered.find('Job', 'ingest-setup');
  const setup = await plan(job, 'ingest-setup');
  for (const c of [...setup.init, ...setup.containers]) {
    const r = await runContainer(`ingest-setup-${c.name}`, c, image, join(RUN, 'logs'));
    say(`setup Job, ${c.name}: exit ${r.code}\n${indent(r.output)}`);
    if (r.code !== 0) throw new Error(`the setup Job's ${c.name} failed`);
  }
  await admin.query('GRANT ingest_service TO ingest');

  // The Deployments' replicas (the HorizontalPodAutoscaler's minimum where it owns the count).
  const replicasOf = (d: Obj): number =>
    d['spec'].replicas ??
    rendered.all('HorizontalPodAutoscaler').find((h) => h['spec'].scaleTargetRef.name === d['metadata'].name)?.['spec'].minReplicas ??
    1;
  const gatewayDeployment = rendered.find('Deployment', 'ingest-gateway');
  const projectorDeployment = rendered.find('Deployment', 'ingest-projector');
  const service = await startService('ingest-gateway');
  cleanups.push(() => service.stop());
  let shown = '';
  const refreshEndpoints = () => {
    const ready = gateways.filter((p) => p.ready()).map((p) => ({ pod: p.name, port: p.hostPort('http') }));
    service.setEndpoints('readiness', ready);
    const now = ready.map((e) => e.pod).join(', ') || 'none';
    if (now !== shown) say(`Service endpoints: ${now}`);
    shown = now;
  };
  const endpointsTimer = setInterval(refreshEndpoints, 250);
  stopEndpoints = () => clearInterval(endpointsTimer);
  const logs = join(RUN, 'logs');
  for (let i = 0; i < replicasOf(projectorDeployment); i++)
    projectors.push(await startPod(await plan(projectorDeployment), image, logs, say));
  for (let i = 0; i < replicasOf(gatewayDeployment); i++) gateways.push(await startPod(await plan(gatewayDeployment), image, logs, say));
  await Promise.all([...projectors, ...gateways].map((p) => p.waitReady(180_000)));
  refreshEndpoints();
  say(`ready: ${projectors.length} projectors, ${gateways.length} gateways behind the Service on 127.0.0.1:${service.port}`);

  // Shops, then the load through the Service while each Deployment rolls.
  const caBundleFile = join(RUN, 'kafka-ca.pem');
  writeFileSync(caBundleFile, secured.caBundle);
  const check = new pg.Pool({ connectionString: db.superUrl('ingest'), max: 4 });
  check.on('error', (err) => say(`check connection: ${err.message}`));
  cleanups.push(() => check.end());
  const kafkaCheck = createKafka({
    brokers: secured.brokers,
    clientId: 'deploy-test-check',
    security: readKafkaSecurity({
      KAFKA_SSL: 'true',
      KAFKA_SSL_CA_FILE: caBundleFile,
      KAFKA_SASL_MECHANISM: 'scram-sha-512',
      KAFKA_SASL_USERNAME: KAFKA_USER,
      KAFKA_SASL_PASSWORD: KAFKA_PASSWORD,
    }),
  });
  const stack = {
    id: `deploy${Date.now().toString(36)}`,
    db: check,
    kafka: kafkaCheck,
    topics,
    groupId: cm['PROJECTOR_GROUP_ID']!,
  } as unknown as Stack;
  const shops: Shop[] = await setupShops(service.port, 6, say);
  const load = createLoad({ tag: stack.id, shops, targets: [{ name: 'service', port: service.port }], ratePerSec: RATE });
  load.start();
  say(`load: ${RATE} requests/s through the Service`);
  const restarts: RestartRecord[] = [];
  const spare = () => refreshEndpoints();
  restarts.push(
    ...(await rollingRestart({
      deployment: gatewayDeployment,
      pods: gateways,
      start: async () => startPod(await plan(gatewayDeployment), image, logs, say),
      onChange: spare,
      say,
    })),
  );
  restarts.push(
    ...(await rollingRestart({
      deployment: projectorDeployment,
      pods: projectors,
      start: async () => startPod(await plan(projectorDeployment), image, logs, say),
      onChange: spare,
      say,
    })),
  );
  await new Promise((r) => setTimeout(r, 5000));
  await load.stop();
  say(`load stopped: ${load.records.length} requests sent`);

  const quiet = await waitQuiescent(stack, cm['PROJECTOR_GROUP_ID']!, 120_000);
  if (!quiet.ok) failures.push(`not quiescent within 120 s: ${quiet.detail}`);
  const verdict: Verdict = await verify(stack, load.records, shops, {
    finalGet: (id) => getCommand(service.port, id),
    connectionErrorsExpected: false,
    checkEvents: true,
  });
  failures.push(...verdict.failures, ...verdict.lost.map((l) => `lost: ${l}`), ...verdict.doubled.map((d) => `doubled: ${d}`));

  // D28 on the pods as deployed: the pepper from the Secret file, revocation heard by every gateway.
  const keys = await checkKeysAcrossGateways(
    gateways.map((g) => g.hostPort('http')),
    shops[0]!.shop,
  );
  failures.push(...keys.failures);
  say(`per-shop key ${keys.keyId}: revoked on every gateway after ${keys.revokedAfterMs.map((ms) => `${ms.toFixed(0)} ms`).join(', ')}`);

  // The operator's commands, from the image, as an operator runs them: `kubectl exec` into a projector
  // pod (the services' login and settings) for topics and parked; a pod of the setup Job's template
  // (the migrating owner, who may create the scratch database) for replay and verify.
  const owner = setup.init[0] ?? setup.containers[0]!;
  const cli = (name: string, ...args: string[]) => ['node', `services/operator/src/cli/${name}.ts`, ...args];
  const operatorRuns: Array<{ what: string; run: () => Promise<{ code: number; output: string }>; expect: RegExp }> = [
    { what: 'topics --check', run: () => execIn(projectors[0]!, cli('topics', '--check')), expect: /no drift/ },
    { what: 'parked list', run: () => execIn(projectors[0]!, cli('parked', 'list')), expect: /no parked commands/ },
    // The gateway pods hold the keys' pepper (API_KEY_PEPPER_FILE).
    {
      what: 'keys list',
      run: () => execIn(gateways[0]!, cli('keys', 'list', shops[0]!.shop)),
      expect: new RegExp(`${keys.keyId}.*revoked`),
    },
    {
      what: 'replay --into scratch',
      run: () => runContainer('operator-replay', { ...owner, argv: cli('replay', '--into', 'scratch') }, image, logs),
      expect: /done: /,
    },
    {
      what: 'verify',
      run: () => runContainer('operator-verify', { ...owner, argv: cli('verify') }, image, logs),
      expect: /every table is identical/,
    },
  ];
  const operatorResults: string[] = [];
  for (const o of operatorRuns) {
    const r = await o.run();
    const ok = r.code === 0 && o.expect.test(r.output);
    operatorResults.push(`${ok ? 'ok  ' : 'FAIL'} ${o.what} (exit ${r.code})`);
    say(`operator: ${o.what}: exit ${r.code}\n${indent(r.output.slice(-1500))}`);
    if (!ok) failures.push(`operator command ${o.what} failed (exit ${r.code})`);
  }

  printSummary({ verdict, restarts, records: load.records.length, operatorResults, image, kafka: cluster.version, quietMs: quiet.ms });
  await admin.end();
}

const indent = (s: string) =>
  s
    .trim()
    .split('\n')
    .map((l) => `    ${l}`)
    .join('\n');

function printSummary(s: {
  verdict: Verdict;
  restarts: RestartRecord[];
  records: number;
  operatorResults: string[];
  image: string;
  kafka: string;
  quietMs: number;
}): void {
  const v = s.verdict;
  const lines = [
    '',
    `deployment test: prod overlay, image ${s.image}, Kafka ${s.kafka} (3 nodes, SASL_SSL), PostgreSQL over TLS (verify-full)`,
    `requests ${v.requests}, accepted ${v.accepted}, failed ${v.failures.length}, lost ${v.lost.length}, doubled ${v.doubled.length}, ` +
      `no answer ${v.unknown}, 503 ${v.status503} (with Retry-After ${v.status503WithRetryAfter}), other 5xx ${v.fiveXX}`,
    ...v.info.map((i) => `  ${i}`),
    'rolling restarts (one pod at a time):',
    ...s.restarts.map(
      (r) =>
        `  ${r.pod} -> ${r.replacement}: replacement ready in ${(r.readyMs / 1000).toFixed(1)} s, preStop ${(r.preStopMs / 1000).toFixed(1)} s, ` +
        `drain after SIGTERM ${(r.drainMs / 1000).toFixed(1)} s, exit ${r.code}${r.killed ? ' (SIGKILL at the grace period)' : ''}`,
    ),
    `slowest drain: ${(Math.max(0, ...s.restarts.map((r) => r.drainMs)) / 1000).toFixed(1)} s; quiescent ${(s.quietMs / 1000).toFixed(1)} s after the load`,
    'operator commands from the image:',
    ...s.operatorResults.map((l) => `  ${l}`),
    failures.length
      ? `\nFAILED (${failures.length}):\n${failures
          .slice(0, 40)
          .map((f) => `  - ${f}`)
          .join('\n')}`
      : '\nevery check held',
  ];
  console.log(lines.join('\n'));
}

try {
  await main();
} catch (err) {
  failures.push(err instanceof Error ? (err.stack ?? err.message) : String(err));
  console.error(`deployment test stopped: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
} finally {
  // The Service is not followed any more while everything stops (no endpoint lines after the summary).
  stopEndpoints();
  await Promise.all([...gateways, ...projectors].map((p) => p.terminate().catch(() => {})));
  for (const c of cleanups.reverse()) await c().catch((err: unknown) => say(`cleanup: ${String(err)}`));
}
process.exit(failures.length ? 1 : 0);
