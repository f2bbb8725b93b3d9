import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProbeServer } from '@ingest/projector';
import { promtoolPath } from '../../scripts/promtool.ts';
import { INGEST_SECRET, get, post, startPipeline, waitFor, type TestPipeline } from '../support/pipeline.ts';

// On the real /metrics of a gateway and of a standalone projector (as deploy/k8s
// runs them, the projector's served by main.ts' probe server) after real work through Kafka and
// PostgreSQL: `promtool check metrics` passes on both, the operability metrics the dashboard and
// the alerts read are there, and every label is one of a closed set.
let p: TestPipeline;
let server: Server;
let projectorUrl: string;
let promtool: string;

beforeAll(async () => {
  promtool = await promtoolPath();
  p = await startPipeline();
  server = createProbeServer({ registry: p.projector!.registry, readiness: p.projector!.readiness });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  projectorUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}, 180_000);
afterAll(async () => {
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  await p.stop();
});

const text = async (url: string) => (await fetch(url)).text();

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}
function samples(exposition: string): Sample[] {
  return exposition
    .split('\n')
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => {
      const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(l);
      if (!m) throw new Error(`not an exposition line: ${l}`);
      const labels = Object.fromEntries([...(m[2] ?? '').matchAll(/([a-zA-Z_]\w*)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1]!, x[2]!]));
      return { name: m[1]!, labels, value: Number(m[3]) };
    });
}
const find = (all: Sample[], name: string, labels: Record<string, string> = {}) =>
  all.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));

/** Every label value our metrics may carry: a closed set, or a pattern with few values (partitions, buckets). */
const BOUNDED: Record<string, RegExp> = {
  method: /^(GET|HEAD|POST|PUT|PATCH|DELETE|OPTIONS|other)$/,
  route: /^(\/[a-z0-9/:._-]*|unmatched)$/, // templates (`:id`), never a raw id
  status: /^[1-5]\d\d$/,
  outcome: /^[a-z_]+$/,
  kind: /^[a-z_.]+$/,
  class: /^(transient|permanent)$/,
  partition: /^[0-2]$/, // the test topics have 3
  pool: /^(gateway|projector)$/,
  state: /^(idle|in_use)$/,
  check: /^[a-z_]+$/,
  table: /^[a-z_]+\.[a-z_]+$/,
  le: /^(\+Inf|\d+(\.\d+)?(e[+-]?\d+)?)$/,
  // prom-client's defaults
  space: /^[a-z_]+$/,
  version: /^v\d+\.\d+\.\d+$/,
  major: /^\d+$/,
  minor: /^\d+$/,
  patch: /^\d+$/,
  type: /^[A-Za-z_]+$/, // Node's handle and resource classes, gc kinds
};

describe('/metrics of a gateway and a projector after real work', () => {
  let gateway: Sample[];
  let projector: Sample[];
  let gatewayText: string;
  let projectorText: string;

  beforeAll(async () => {
    const base = p.url();
    const ok = await post(
      `${base}/api/ingest/products`,
      { shop: 'metrics.example', products: [{ barcode: '7', product_name: 'x' }] },
      { 'x-ingest-secret': INGEST_SECRET },
    );
    expect(ok.status).toBe(200);
    expect((await post(`${base}/api/ingest/products`, { shop: 'metrics.example', products: [] }, {})).status).toBe(401);
    expect((await get(`${base}/api/commands/${crypto.randomUUID()}/nothing-here`)).status).toBe(404);
    await p.projector!.pruner!.runOnce(); // the parked count is the pruner's
    await p.projector!.relay!.drain();
    projectorText = await waitFor(
      async () => {
        const t = await text(`${projectorUrl}/metrics`);
        const s = samples(t);
        const caughtUp = find(s, 'projector_lag_seconds').some((x) => x.value === 0);
        const published = find(s, 'relay_events_published_total').some((x) => x.value > 0);
        return caughtUp && published ? t : null;
      },
      20_000,
      'the projector caught up and the relay published',
    );
    gatewayText = await text(`${base}/metrics`);
    gateway = samples(gatewayText);
    projector = samples(projectorText);
  }, 60_000);

  it('pass `promtool check metrics` (names, types, units, help), both', () => {
    for (const [who, exposition] of [
      ['gateway', gatewayText],
      ['projector', projectorText],
    ] as const) {
      const r = spawnSync(promtool, ['check', 'metrics'], { input: exposition, encoding: 'utf8' });
      expect(r.stdout + r.stderr, who).toBe('');
      expect(r.status, who).toBe(0);
    }
  });

  it('carry the gateway metrics: requests and latency by route template, Kafka append latency, its pool in use and waiting', () => {
    expect(
      find(gateway, 'http_requests_total', { method: 'POST', route: '/api/ingest/products', status: '200' })[0]?.value,
    ).toBeGreaterThanOrEqual(1);
    expect(find(gateway, 'http_requests_total', { route: 'unmatched', status: '404' })[0]?.value).toBeGreaterThanOrEqual(1);
    expect(find(gateway, 'http_request_duration_seconds_count', { route: '/api/ingest/products' }).length).toBeGreaterThan(0);
    expect(find(gateway, 'kafka_produce_seconds_count')[0]?.value).toBeGreaterThanOrEqual(1);
    expect(find(gateway, 'db_pool_connections', { pool: 'gateway', state: 'in_use' })).toHaveLength(1);
    expect(find(gateway, 'db_pool_waiting_clients', { pool: 'gateway' })).toHaveLength(1);
    expect(find(gateway, 'ingest_ready').length).toBeGreaterThan(0);
  });

  it('carry the projector metrics: lag in seconds and offsets per partition, relay backlog and its oldest row, parked commands, pool in use and waiting', () => {
    expect(find(projector, 'projector_lag_seconds').map((s) => s.labels['partition'])).not.toHaveLength(0);
    expect(find(projector, 'projector_lag_offsets').length).toBeGreaterThan(0);
    expect(find(projector, 'projector_commands_total', { kind: 'products.upsert', outcome: 'applied' })[0]?.value).toBeGreaterThanOrEqual(
      1,
    );
    expect(find(projector, 'relay_leader')[0]?.value).toBe(1);
    expect(find(projector, 'relay_outbox_pending')).toHaveLength(1);
    expect(find(projector, 'relay_outbox_oldest_seconds')).toHaveLength(1);
    expect(find(projector, 'relay_publish_seconds_count')[0]?.value).toBeGreaterThanOrEqual(1);
    expect(find(projector, 'projector_parked_open')).toEqual([{ name: 'projector_parked_open', labels: {}, value: 0 }]);
    expect(find(projector, 'prune_round_seconds_count')[0]?.value).toBeGreaterThanOrEqual(1);
    expect(find(projector, 'projector_commands_retrying')).toHaveLength(1);
    expect(find(projector, 'db_pool_connections', { pool: 'projector', state: 'in_use' })).toHaveLength(1);
    expect(find(projector, 'db_pool_waiting_clients', { pool: 'projector' })).toHaveLength(1);
    expect(find(projector, 'ingest_ready', { check: 'consumer' })[0]?.value).toBe(1);
  });

  it('label every series from a closed set (no raw path, id or message)', () => {
    const unbounded = [...gateway, ...projector].flatMap((s) =>
      Object.entries(s.labels)
        .filter(([k, v]) => !BOUNDED[k]?.test(v))
        .map(([k, v]) => `${s.name}{${k}="${v}"}`),
    );
    expect(unbounded).toEqual([]);
  });
});
