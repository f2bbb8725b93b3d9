// deploy/prometheus and deploy/grafana: every expression parses (Prometheus' own PromQL grammar) and
// reads only metrics that exist: registered by our code, prom-client's defaults, or named external
// ones (EXTERNAL_METRICS). promtool (Debian's `prometheus` package, fetched by scripts/promtool.ts)
// checks the rules, their behaviour on given series, the scrape configuration and /metrics too.
import { spawnSync } from 'node:child_process';
import { get as httpGet } from 'node:http';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { createRegistry, registerPoolMetrics } from '@ingest/runtime';
import { lintExposition } from '@ingest/runtime/testing';
import { gatewayMetrics } from '@ingest/gateway';
import { startTestGateway, type TestGateway } from '@ingest/gateway/testing';
import { projectorMetrics, prunerMetrics, relayMetrics, upkeepMetrics } from '@ingest/projector';
import { promtoolPath } from '../../scripts/promtool.ts';
import {
  defaultMetricNames,
  EXTERNAL_METRICS,
  metricFamily,
  promqlMetrics,
  read,
  readYamlDocs,
  registeredMetricNames,
  REPO,
  withGrafanaIntervals,
} from './support.ts';

interface Rule {
  alert: string;
  expr: string;
  for: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}
interface Panel {
  id: number;
  type: string;
  title: string;
  datasource?: { type: string; uid: string };
  gridPos: { h: number; w: number; x: number; y: number };
  targets?: Array<{ refId: string; expr: string }>;
}

const RULES = 'deploy/prometheus/ingest-alerts.yml';
const rules: Rule[] = (readYamlDocs(RULES)[0]!['groups'] as Array<{ rules: Rule[] }>).flatMap((g) => g.rules);
const dashboard = JSON.parse(read('deploy/grafana/retail-ingestion.json')) as { uid: string; panels: Panel[]; templating: { list: Array<{ name: string; type: string }> } };
const queryPanels = dashboard.panels.filter((p) => p.type !== 'row');
const dashboardExprs = queryPanels.flatMap((p) => (p.targets ?? []).map((t) => ({ where: `${p.title} ${t.refId}`, expr: withGrafanaIntervals(t.expr) })));

const registered = registeredMetricNames();
const known = new Map([...registered, ...defaultMetricNames(), ...Object.keys(EXTERNAL_METRICS).map((n) => [n, 'external'] as const)]);

function unknownMetrics(exprs: Array<{ where: string; expr: string }>): string[] {
  return exprs.flatMap(({ where, expr }) => {
    const { metrics, errors } = promqlMetrics(expr);
    return [...errors.map((e) => `${where}: ${e}`), ...metrics.filter((m) => !metricFamily(m, known)).map((m) => `${where}: unknown metric ${m}`)];
  });
}

const referenced = (exprs: Array<{ expr: string }>): Set<string> =>
  new Set(exprs.flatMap(({ expr }) => promqlMetrics(expr).metrics.map((m) => metricFamily(m, known) ?? m)));

/** Everything one process that runs the gateway and the projector (`npm start`) exports, each labelled series present. */
async function wholeProcessMetrics(): Promise<string> {
  const registry = createRegistry({ defaultMetrics: true });
  const g = gatewayMetrics(registry);
  g.requests.inc({ method: 'GET', route: '/healthz', status: '200' });
  g.latency.observe({ method: 'GET', route: '/healthz' }, 0.001);
  g.produce.observe(0.01);
  g.replyWait.observe({ outcome: 'replied' }, 0.02);
  const p = projectorMetrics(registry);
  p.applied.inc({ kind: 'products.upsert', outcome: 'applied' });
  p.retries.inc({ class: 'transient' });
  p.groupSize.observe(2);
  p.duration.observe({ kind: 'products.upsert' }, 0.01);
  p.lagOffsets.set({ partition: '0' }, 3);
  p.lag.batchStarted(0);
  const r = relayMetrics(registry);
  r.published.inc();
  r.publishSeconds.observe(0.01);
  r.setOldest(4);
  const pr = prunerMetrics(registry);
  pr.deleted.inc({ table: 'agent_runtime.outbox' });
  pr.seconds.observe(0.1);
  const u = upkeepMetrics(registry);
  u.onAction('sot.inventory_levels', 'vacuum_analyze', 0.2);
  u.onLook(new Map([['sot.inventory_levels', { dead: 12, live: 1000 }]]));
  registerPoolMetrics(registry, 'gateway', { totalCount: 3, idleCount: 1, waitingCount: 0, options: { max: 10 } });
  registerPoolMetrics(registry, 'projector', { totalCount: 3, idleCount: 1, waitingCount: 0, options: { max: 10 } });
  const text = await registry.metrics();
  registry.clear();
  return text;
}

describe('metric names', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway();
  });
  afterAll(() => gw.close());

  it('are found in the sources: every metric the gateway serves on /metrics is among them', async () => {
    expect(registered.size).toBeGreaterThanOrEqual(16);
    const served = [...(await (await fetch(`${gw.url}/metrics`)).text()).matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => m[1]!);
    expect(served.length).toBeGreaterThan(0);
    expect(served.filter((n) => !registered.has(n))).toEqual([]);
  });

  it("of one whole process (gateway, projector, relay, pruner, pools, defaults) pass Prometheus' naming rules, and are all found in the sources", async () => {
    const text = await wholeProcessMetrics();
    expect(lintExposition(text)).toEqual([]);
    const types = new Map([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1]!, m[2]!]));
    for (const [name, type] of types) expect(known.get(name), name).toBe(type);
  });

  it('include the prom-client defaults the dashboard reads', () => {
    for (const name of ['process_resident_memory_bytes', 'process_cpu_seconds_total', 'nodejs_heap_size_used_bytes', 'nodejs_eventloop_lag_p99_seconds']) {
      expect(known.get(name), name).toBeDefined();
    }
  });

  it('are checked for real: a made-up name, a histogram suffix on a gauge and a syntax error are refused', () => {
    expect(unknownMetrics([{ where: 'x', expr: 'sum(rate(http_requests_total[5m]))' }])).toEqual([]);
    expect(unknownMetrics([{ where: 'x', expr: 'histogram_quantile(0.99, sum by (le) (rate(kafka_produce_seconds_bucket[5m])))' }])).toEqual([]);
    expect(unknownMetrics([{ where: 'x', expr: 'relay_backlog_oldest_seconds > 60' }])).toEqual(['x: unknown metric relay_backlog_oldest_seconds']);
    expect(unknownMetrics([{ where: 'x', expr: 'relay_leader_count' }])).toEqual(['x: unknown metric relay_leader_count']);
    expect(unknownMetrics([{ where: 'x', expr: 'sum(rate(http_requests_total[5m])' }])).toHaveLength(1);
  });
});

describe(RULES, () => {
  it('has the alerts the service needs', () => {
    expect(rules.map((r) => r.alert).sort()).toEqual(
      [
        'IngestGatewayErrorRate',
        'IngestNoReadyReplica',
        'IngestParkedCommands',
        'IngestPodNotReady',
        'IngestProjectorLagHigh',
        'IngestProjectorStalled',
        'IngestRelayBacklogGrowing',
        'IngestRelayNoLeader',
        'IngestRelayNotPublishing',
        'IngestRelayBacklogOld',
        'IngestProjectorNotReady',
        'IngestDbPoolWaiting',
        'IngestTargetDown',
        'IngestDeadRowsPiling',
      ].sort(),
    );
  });

  it('gives every alert a duration, a severity and a summary and description', () => {
    for (const r of rules) {
      expect(r.for, r.alert).toMatch(/^\d+[smh]$/);
      expect(['warning', 'critical'], r.alert).toContain(r.labels.severity);
      expect(r.annotations.summary, r.alert).toBeTruthy();
      expect(r.annotations.description, r.alert).toBeTruthy();
    }
  });

  it('parses, and reads only metrics that exist', () => {
    expect(unknownMetrics(rules.map((r) => ({ where: r.alert, expr: r.expr })))).toEqual([]);
  });

  it('reads the lag, relay, parked, 5xx and readiness metrics', () => {
    const used = referenced(rules);
    for (const m of [
      'projector_lag_seconds',
      'projector_lag_offsets',
      'relay_outbox_pending',
      'relay_outbox_oldest_seconds',
      'relay_events_published_total',
      'relay_leader',
      'http_requests_total',
      'projector_parked_open',
      'ingest_ready',
      'db_pool_waiting_clients',
      'table_dead_rows',
      'up',
    ]) {
      expect(used, m).toContain(m);
    }
    for (const m of Object.keys(EXTERNAL_METRICS)) expect(used, `${m} is listed as external but unused`).toContain(m);
  });
});

describe('deploy/grafana/retail-ingestion.json', () => {
  it('is a dashboard with a Prometheus data source variable, unique panel ids and no overlapping panels', () => {
    expect(dashboard.uid).toBe('retail-ingestion');
    expect(dashboard.templating.list).toContainEqual(expect.objectContaining({ name: 'datasource', type: 'datasource' }));
    const ids = dashboard.panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    const cells = new Set<string>();
    for (const p of dashboard.panels) {
      expect(p.gridPos.x + p.gridPos.w, p.title).toBeLessThanOrEqual(24);
      for (let x = p.gridPos.x; x < p.gridPos.x + p.gridPos.w; x++) {
        for (let y = p.gridPos.y; y < p.gridPos.y + p.gridPos.h; y++) {
          expect(cells.has(`${x},${y}`), `${p.title} overlaps at ${x},${y}`).toBe(false);
          cells.add(`${x},${y}`);
        }
      }
    }
    for (const p of queryPanels) {
      expect(p.datasource, p.title).toEqual({ type: 'prometheus', uid: '${datasource}' });
      expect(p.targets?.length, p.title).toBeGreaterThan(0);
    }
  });

  it('parses, and reads only metrics that exist', () => {
    expect(dashboardExprs.length).toBeGreaterThan(20);
    expect(unknownMetrics(dashboardExprs)).toEqual([]);
  });

  it('shows requests and 5xx by route, p99 latency, Kafka append latency, lag, outcomes, parked, group size, relay and its backlog age, retries, pruning, readiness, pools, memory and event loop', () => {
    const used = referenced(dashboardExprs);
    for (const m of [
      'http_requests_total',
      'http_request_duration_seconds',
      'kafka_produce_seconds',
      'projector_lag_offsets',
      'projector_lag_seconds',
      'projector_commands_total',
      'projector_parked_open',
      'projector_group_commands',
      'relay_events_published_total',
      'relay_outbox_pending',
      'relay_leader',
      'projector_retries_total',
      'prune_rows_deleted_total',
      'process_resident_memory_bytes',
      'nodejs_eventloop_lag_p99_seconds',
      'relay_outbox_oldest_seconds',
      'relay_publish_seconds',
      'table_dead_rows',
      'table_upkeep_total',
      'projector_commands_retrying',
      'ingest_ready',
      'db_pool_connections',
      'db_pool_waiting_clients',
    ]) {
      expect(used, m).toContain(m);
    }
    expect(dashboardExprs.some((e) => /status=~"5\.\."/.test(e.expr) && /by \(route/.test(e.expr))).toBe(true);
    expect(dashboardExprs.some((e) => e.expr.startsWith('histogram_quantile(0.99') && e.expr.includes('http_request_duration_seconds_bucket'))).toBe(true);
  });
});

// promtool compares annotations exactly; the cases below are about when each alert fires, so they run
// against a copy of the rules without annotations (promtool check rules has checked the templates).
const series = (name: string, labels: Record<string, string>, values: string) => ({
  series: `${name}{${Object.entries(labels).map(([k, v]) => `${k}="${v}"`).join(',')}}`,
  values,
});
const P1 = { job: 'ingest-projector', instance: 'p1:9091' };
const P2 = { job: 'ingest-projector', instance: 'p2:9091' };
const G1 = { job: 'ingest-gateway', instance: 'g1:8080' };
type Case = [what: string, input: Array<ReturnType<typeof series>>, at: string, alert: string, fires: Array<Record<string, string>>];
const CASES: Case[] = [
  ['lag of 90 s for 10 minutes', [series('projector_lag_seconds', P1, '90x20')], '10m', 'IngestProjectorLagHigh', [{ severity: 'warning' }]],
  ['lag of 30 s', [series('projector_lag_seconds', P1, '30x20')], '10m', 'IngestProjectorLagHigh', []],
  ['a backlog and no command consumed', [series('projector_lag_offsets', { ...P1, partition: '0' }, '5x30'), series('projector_commands_total', { ...P1, kind: 'products.upsert', outcome: 'applied' }, '7x30')], '20m', 'IngestProjectorStalled', [{ severity: 'critical' }]],
  ['a backlog and no command consumed since start', [series('projector_lag_offsets', { ...P1, partition: '0' }, '5x30')], '20m', 'IngestProjectorStalled', [{ severity: 'critical' }]],
  ['a backlog being worked off', [series('projector_lag_offsets', { ...P1, partition: '0' }, '5x30'), series('projector_commands_total', { ...P1, kind: 'products.upsert', outcome: 'applied' }, '0+10x30')], '20m', 'IngestProjectorStalled', []],
  ['rows pending at the leader and nothing published', [series('relay_outbox_pending', P1, '50x30'), series('relay_leader', P1, '1x30'), series('relay_leader', P2, '0x30'), series('relay_outbox_pending', P2, '0x30'), series('relay_events_published_total', P1, '100x30')], '20m', 'IngestRelayNotPublishing', [{ severity: 'critical' }]],
  ['rows pending and events published', [series('relay_outbox_pending', P1, '50x30'), series('relay_leader', P1, '1x30'), series('relay_events_published_total', P1, '0+5x30')], '20m', 'IngestRelayNotPublishing', []],
  ['a stale count at a relay that no longer leads', [series('relay_outbox_pending', P2, '50x30'), series('relay_leader', P2, '0x30'), series('relay_outbox_pending', P1, '0x30'), series('relay_leader', P1, '1x30'), series('relay_events_published_total', P1, '100x30')], '20m', 'IngestRelayNotPublishing', []],
  ['a growing outbox over 1,000 rows', [series('relay_outbox_pending', P1, '1000+50x60'), series('relay_leader', P1, '1x60')], '40m', 'IngestRelayBacklogGrowing', [{ severity: 'warning' }]],
  ['a large outbox that is not growing', [series('relay_outbox_pending', P1, '5000x60'), series('relay_leader', P1, '1x60')], '40m', 'IngestRelayBacklogGrowing', []],
  ['the oldest row 10 minutes old at the leader', [series('relay_outbox_oldest_seconds', P1, '600+60x20'), series('relay_leader', P1, '1x20'), series('relay_outbox_oldest_seconds', P2, '0x20'), series('relay_leader', P2, '0x20')], '10m', 'IngestRelayBacklogOld', [{ severity: 'warning' }]],
  ['rows published within a minute', [series('relay_outbox_oldest_seconds', P1, '30x20'), series('relay_leader', P1, '1x20')], '10m', 'IngestRelayBacklogOld', []],
  ['an old count at a relay that no longer leads', [series('relay_outbox_oldest_seconds', P2, '900x20'), series('relay_leader', P2, '0x20'), series('relay_outbox_oldest_seconds', P1, '0x20'), series('relay_leader', P1, '1x20')], '10m', 'IngestRelayBacklogOld', []],
  ['no relay leads', [series('relay_leader', P1, '0x10'), series('relay_leader', P2, '0x10')], '5m', 'IngestRelayNoLeader', [{ severity: 'critical' }]],
  ['no projector is scraped', [series('up', G1, '1x10')], '5m', 'IngestRelayNoLeader', [{ severity: 'critical' }]],
  ['one relay leads', [series('relay_leader', P1, '1x10'), series('relay_leader', P2, '0x10')], '5m', 'IngestRelayNoLeader', []],
  ['9% of requests answer 503', [series('http_requests_total', { ...G1, method: 'POST', route: '/api/ingest/products', status: '200' }, '0+100x20'), series('http_requests_total', { ...G1, method: 'POST', route: '/api/ingest/products', status: '503' }, '0+10x20')], '15m', 'IngestGatewayErrorRate', [{ severity: 'critical' }]],
  ['1% of requests answer 500', [series('http_requests_total', { ...G1, method: 'POST', route: '/api/ingest/products', status: '200' }, '0+100x20'), series('http_requests_total', { ...G1, method: 'POST', route: '/api/ingest/products', status: '500' }, '0+1x20')], '15m', 'IngestGatewayErrorRate', []],
  ['a parked command seen by the pruner of the last round', [series('projector_parked_open', P1, '2x10'), series('prune_round_seconds_count', P1, '0+1x10')], '5m', 'IngestParkedCommands', [{ severity: 'warning' }]],
  ['a stale parked count at a process that no longer prunes', [series('projector_parked_open', P2, '3x10'), series('prune_round_seconds_count', P2, '4x10'), series('projector_parked_open', P1, '0x10'), series('prune_round_seconds_count', P1, '0+1x10')], '5m', 'IngestParkedCommands', []],
  ['a projector whose consumer has not joined for 10 minutes', [series('ingest_ready', { ...P1, check: 'consumer' }, '0x15'), series('ingest_ready', { ...P1, check: 'database' }, '1x15'), series('ingest_ready', { ...P2, check: 'consumer' }, '1x15')], '10m', 'IngestProjectorNotReady', [{ severity: 'warning', instance: P1.instance }]],
  ['a projector not ready for 2 minutes, then ready', [series('ingest_ready', { ...P1, check: 'database' }, '0 0 0 1 1 1 1 1 1 1 1')], '10m', 'IngestProjectorNotReady', []],
  ['a gateway not ready (its own alerts and the error rate cover it)', [series('ingest_ready', { ...G1, check: 'kafka' }, '0x15')], '10m', 'IngestProjectorNotReady', []],
  ['requests waiting for a connection at every scrape', [series('db_pool_waiting_clients', { ...G1, pool: 'gateway' }, '3x20'), series('db_pool_waiting_clients', { ...P1, pool: 'projector' }, '0x20')], '15m', 'IngestDbPoolWaiting', [{ severity: 'warning', instance: G1.instance, pool: 'gateway' }]],
  ['a pool that waits now and then', [series('db_pool_waiting_clients', { ...G1, pool: 'gateway' }, '0 3 0 2 0 4 0 1 0 2 0 3 0 1 0 2 0 3 0 1 0')], '15m', 'IngestDbPoolWaiting', []],
  ['more dead rows than live ones for 30 minutes (nothing reclaims them)', [series('table_dead_rows', { ...P1, table: 'sot.inventory_levels' }, '2500000x40'), series('table_live_rows', { ...P1, table: 'sot.inventory_levels' }, '2000000x40')], '35m', 'IngestDeadRowsPiling', [{ severity: 'warning', instance: P1.instance, table: 'sot.inventory_levels' }]],
  ['dead rows of a big table below autovacuum\'s 20 %', [series('table_dead_rows', { ...P1, table: 'sot.inventory_levels' }, '1500000x40'), series('table_live_rows', { ...P1, table: 'sot.inventory_levels' }, '10000000x40')], '35m', 'IngestDeadRowsPiling', []],
  ['dead rows that a vacuum reclaims every few minutes', [series('table_dead_rows', { ...P1, table: 'sot.inventory_levels' }, '2500000 2500000 0 0 2500000 2500000 0 0 2500000 2500000 0 0 2500000 2500000 0 0 2500000 2500000 0 0 2500000 2500000 0 0 2500000 2500000 0 0 2500000 2500000 0 0 2500000 2500000 0 0 2500000'), series('table_live_rows', { ...P1, table: 'sot.inventory_levels' }, '2000000x40')], '35m', 'IngestDeadRowsPiling', []],
  ['a gateway that does not answer /metrics', [series('up', G1, '0x10')], '5m', 'IngestTargetDown', [{ severity: 'critical', ...G1 }]],
  ['a gateway that answers', [series('up', G1, '1x10')], '5m', 'IngestTargetDown', []],
  ['a projector Deployment without an available replica', [series('kube_deployment_status_replicas_available', { namespace: 'ingest', deployment: 'ingest-projector' }, '0x10'), series('kube_deployment_status_replicas_available', { namespace: 'ingest', deployment: 'other' }, '0x10')], '5m', 'IngestNoReadyReplica', [{ severity: 'critical', namespace: 'ingest', deployment: 'ingest-projector' }]],
  ['a gateway Deployment with available replicas', [series('kube_deployment_status_replicas_available', { namespace: 'ingest', deployment: 'ingest-gateway' }, '2x10')], '5m', 'IngestNoReadyReplica', []],
  ['a gateway pod not ready for 15 minutes', [series('kube_pod_status_ready', { namespace: 'ingest', pod: 'ingest-gateway-5d8f-x2x', condition: 'true' }, '0x20'), series('kube_pod_status_ready', { namespace: 'ingest', pod: 'other-1', condition: 'true' }, '0x20')], '15m', 'IngestPodNotReady', [{ severity: 'warning', namespace: 'ingest', pod: 'ingest-gateway-5d8f-x2x' }]],
];

// promtool is Debian's (`prometheus` package), fetched and cached into .tools/ by scripts/promtool.ts.
// Each test runs promtool as a process; evaluating every alert case takes about 2 s alone and more
// than vitest's 5 s default on a loaded machine, which is no failure of the rules.
describe('with promtool', { timeout: 60_000 }, () => {
  let gw: TestGateway;
  let bin = 'promtool';
  // node:http without keep-alive: fetch's pool may hold a dead socket to a port an earlier gateway had.
  const get = (path: string) =>
    new Promise<string>((resolve, reject) => {
      httpGet(`${gw.url}${path}`, { agent: false }, (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (c: string) => (body += c)).on('end', () => resolve(body));
      }).on('error', reject);
    });
  beforeAll(async () => {
    bin = await promtoolPath(); // a download of about 20 MB on first use
    gw = await startTestGateway();
    await get('/healthz');
    await get('/nowhere');
  }, 180_000);
  afterAll(() => gw.close());
  it('promtool runs', () => expect(spawnSync(bin, ['--version'], { encoding: 'utf8' }).stdout + '').toMatch(/promtool, version 2\./));
  const dir = mkdtempSync(join(tmpdir(), 'ingest-promtool-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const promtool = (...args: string[]) => spawnSync(bin, args, { cwd: dir, encoding: 'utf8' });

  it('checks the rules (syntax, types, templates)', () => {
    const r = promtool('check', 'rules', join(REPO, RULES));
    expect(r.stdout + r.stderr).toContain(`SUCCESS: ${rules.length} rules found`);
    expect(r.status).toBe(0);
  });

  it('fires each alert when it should and not otherwise', () => {
    const groups = (readYamlDocs(RULES)[0]!['groups'] as Array<{ name: string; rules: Rule[] }>).map((g) => ({
      ...g,
      rules: g.rules.map(({ annotations: _annotations, ...rest }) => rest),
    }));
    writeFileSync(join(dir, 'rules.yml'), stringify({ groups }));
    const tests = CASES.map(([what, input, at, alert, fires]) => ({
      name: what,
      interval: '1m',
      input_series: input,
      alert_rule_test: [{ eval_time: at, alertname: alert, exp_alerts: fires.map((labels) => ({ exp_labels: labels })) }],
    }));
    writeFileSync(join(dir, 'cases.yml'), stringify({ rule_files: ['rules.yml'], evaluation_interval: '1m', tests }));
    const r = promtool('test', 'rules', 'cases.yml');
    expect(r.stdout + r.stderr).toContain('SUCCESS');
    expect(r.status).toBe(0);
    expect(new Set(CASES.filter((c) => c[4].length).map((c) => c[3]))).toEqual(new Set(rules.map((r) => r.alert)));
  });

  it('checks the metrics of every process (promtool check metrics: names, types, units, help)', async () => {
    const served = await get('/metrics');
    const all = await wholeProcessMetrics();
    expect(all).toContain('projector_lag_seconds{partition="0"}');
    for (const text of [served, all]) {
      const r = spawnSync(bin, ['check', 'metrics'], { input: text, encoding: 'utf8' });
      expect(r.stdout + r.stderr).toBe('');
      expect(r.status).toBe(0);
    }
    // and it does refuse what it should (so that a pass means something)
    const bad = spawnSync(bin, ['check', 'metrics'], { input: '# HELP x_total a gauge\n# TYPE x_total gauge\nx_total 1\n', encoding: 'utf8' });
    expect(bad.stdout + bad.stderr).toContain('non-counter metrics should not have "_total" suffix');
  });

  it('checks prometheus.yml (its Kubernetes discovery replaced: Debian builds promtool without it)', () => {
    copyFileSync(join(REPO, 'deploy/prometheus/ingest-alerts.yml'), join(dir, 'ingest-alerts.yml'));
    const config = read('deploy/prometheus/prometheus.yml').replace(/kubernetes_sd_configs:\n(\s+)- role: pod/, 'static_configs:\n$1- targets: ["127.0.0.1:9091"]');
    expect(config).not.toContain('kubernetes_sd_configs');
    writeFileSync(join(dir, 'prometheus.yml'), config);
    const r = promtool('check', 'config', 'prometheus.yml');
    expect(r.stdout + r.stderr).toContain('SUCCESS: 1 rule files found');
    expect(r.status).toBe(0);
  });
});

describe('deploy/prometheus/prometheus.yml', () => {
  it("scrapes the service's annotated pods and names their job as the rules expect", () => {
    const config = readYamlDocs('deploy/prometheus/prometheus.yml')[0]!;
    expect(config['rule_files']).toEqual(['ingest-alerts.yml']);
    const relabel: Array<Record<string, any>> = config['scrape_configs'][0].relabel_configs;
    expect(relabel).toContainEqual(expect.objectContaining({ source_labels: ['__meta_kubernetes_pod_label_app_kubernetes_io_part_of'], regex: 'retail-ingestion', action: 'keep' }));
    expect(relabel).toContainEqual(expect.objectContaining({ source_labels: ['__meta_kubernetes_pod_label_app_kubernetes_io_name'], target_label: 'job' }));
    const jobs = new Set(rules.flatMap((r) => [...r.expr.matchAll(/job=~"([^"]+)"/g)].flatMap((m) => m[1]!.split('|'))));
    expect(jobs).toEqual(new Set(['ingest-gateway', 'ingest-projector']));
    for (const job of jobs) {
      const d = readYamlDocs(`deploy/k8s/base/${job.replace('ingest-', '')}.yaml`)[0]!;
      const annotations = d['spec']['template']['metadata']['annotations'];
      expect(d['spec']['template']['metadata']['labels']['app.kubernetes.io/name']).toBe(job);
      expect(annotations['prometheus.io/scrape']).toBe('true');
      // The annotated port is the metrics listener, not the API port.
      const ports = d['spec']['template']['spec']['containers'][0]['ports'];
      expect(ports.find((p: Record<string, any>) => p['name'] === 'metrics')?.containerPort, job).toBe(Number(annotations['prometheus.io/port']));
    }
  });
});
