import { Agent, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes, randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { createMetricsServer } from '@ingest/runtime';
import { lintExposition } from '@ingest/runtime/testing';
import { TEST_CRON_SECRET, TEST_INGEST_SECRET, startTestGateway, type TestGateway } from '../testing/testGateway.ts';

// Metrics and probes (docs/operations.md "Observability") at the buildApp tier: the request
// metrics keep a bounded label set whatever URLs are thrown at the gateway; /metrics passes
// Prometheus' naming rules; /readyz follows its checks both ways while /healthz never reads
// them.
let gw: TestGateway;
afterEach(() => {
  agent.destroy();
  return gw.close();
});

const agent = new Agent({ keepAlive: true, maxSockets: 8 });
const raw = (port: number, method: string, path: string, headers: Record<string, string> = {}): Promise<number> =>
  new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers, agent }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });

const seriesCount = async (gw: TestGateway): Promise<number> =>
  (await gw.registry.getMetricsAsJSON()).reduce((n, m) => n + m.values.length, 0);

const rnd = () => randomBytes(6).toString('hex');
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];
// Each shape makes a fresh URL on every call; what varies within a shape is what a hostile client controls.
const SHAPES: Array<() => string> = [
  () => `/${rnd()}`,
  () => `/${rnd()}/${rnd()}/${rnd()}`,
  () => `/api/commands/${rnd()}`,
  () => `/api/commands/${randomUUID()}`,
  () => `/api/commands/${rnd()}/${rnd()}`,
  () => `/api/ingest/${rnd()}`,
  () => `/api/ingest/products/${rnd()}`,
  () => `/api/products/bulk-upsert?${rnd()}=${rnd()}`,
  () => `/api/admin/${rnd()}`,
  () => `/healthz/${rnd()}`,
  () => `/metrics?${rnd()}`,
  () => `/%${rnd().slice(0, 1)}z${rnd()}`, // a malformed escape
];
const HEADERS: Array<Record<string, string>> = [
  {},
  { 'x-ingest-secret': TEST_INGEST_SECRET },
  { 'x-cron-secret': TEST_CRON_SECRET, 'x-shop': 'a.example' },
  { 'x-ingest-secret': rnd() },
];

describe('request metrics', () => {
  it('add no series for 1,000 random paths and methods once each route and status has been seen', async () => {
    gw = await startTestGateway();
    // The first few: every method, shape and kind of credentials once.
    for (const method of METHODS) for (const shape of SHAPES) for (const headers of HEADERS) await raw(gw.port, method, shape(), headers);
    const settled = await seriesCount(gw);
    const statuses = new Set<number>();
    for (let i = 0; i < 1000; i++) {
      const pick = <T>(xs: T[]): T => xs[Math.floor(Math.random() * xs.length)] as T;
      // Half of them OPTIONS /api/commands/<random>: the request that once made 17 series each.
      const [method, path] = i % 2 === 0 ? ['OPTIONS', `/api/commands/${rnd()}`] : [pick(METHODS), pick(SHAPES)()];
      statuses.add(await raw(gw.port, method, path, pick(HEADERS)));
    }
    expect([...statuses].every((s) => s < 500)).toBe(true);
    expect(await seriesCount(gw)).toBe(settled);
    const routes = new Set((await gw.registry.getSingleMetric('http_requests_total')!.get()).values.map((v) => String(v.labels['route'])));
    expect([...routes].filter((r) => r !== 'unmatched' && !r.startsWith('/'))).toEqual([]);
    expect(routes.size).toBeLessThanOrEqual(16);
    expect([...routes].some((r) => /[0-9a-f]{12}/.test(r))).toBe(false);
  });
});

describe('GET /metrics', () => {
  it("passes Prometheus' naming rules (what promtool check metrics checks)", async () => {
    gw = await startTestGateway();
    await raw(gw.port, 'GET', '/healthz');
    const text = await (await fetch(`${gw.url}/metrics`)).text();
    expect(text).toContain('http_requests_total{');
    expect(lintExposition(text)).toEqual([]);
  });

  it('with a metrics port of its own (METRICS_PORT) is served there only: 404 on the API port, not in the OpenAPI document', async () => {
    gw = await startTestGateway({}, { metricsOnApiPort: false });
    const metricsServer = createMetricsServer(gw.registry).listen(0, '127.0.0.1');
    await new Promise((resolve) => metricsServer.once('listening', resolve));
    try {
      const port = (metricsServer.address() as AddressInfo).port;
      await raw(gw.port, 'GET', '/healthz');
      expect((await fetch(`${gw.url}/metrics`)).status).toBe(404);
      expect((await fetch(`${gw.url}/healthz`)).status).toBe(200);
      const openapi = (await (await fetch(`${gw.url}/openapi.json`)).json()) as { paths: Record<string, unknown> };
      expect(Object.keys(openapi.paths)).not.toContain('/metrics');
      expect(Object.keys(openapi.paths)).toContain('/readyz');
      const scraped = await fetch(`http://127.0.0.1:${port}/metrics`);
      expect(scraped.status).toBe(200);
      expect(await scraped.text()).toContain('http_requests_total{');
      // Nothing but /metrics on that listener: it is opened to the monitoring namespace alone.
      expect((await fetch(`http://127.0.0.1:${port}/api/ingest/products`, { method: 'POST' })).status).toBe(404);
      expect((await fetch(`http://127.0.0.1:${port}/metrics`, { method: 'POST' })).status).toBe(405);
    } finally {
      metricsServer.close();
    }
  });
});

describe('probes', () => {
  const probe = async (path: string) => {
    const r = await fetch(`${gw.url}${path}`);
    return {
      status: r.status,
      retryAfter: r.headers.get('retry-after'),
      body: (await r.json()) as { ok: boolean; checks?: Record<string, boolean> },
    };
  };

  it('/readyz is 503 until every check passes, 503 again when one fails, 200 when it is back; /healthz stays 200', async () => {
    const state = { database: false, listen: false, kafka: false };
    let asked = 0;
    gw = await startTestGateway({}, { isReady: async () => (asked++, { ...state }), readiness: { cacheMs: 0 } });
    const notReady = await probe('/readyz');
    expect(notReady).toEqual({
      status: 503,
      retryAfter: '5',
      body: { ok: false, checks: { database: false, listen: false, kafka: false } },
    });
    expect((await probe('/healthz')).status).toBe(200);

    Object.assign(state, { database: true, listen: true, kafka: true });
    expect(await probe('/readyz')).toEqual({
      status: 200,
      retryAfter: null,
      body: { ok: true, checks: { database: true, listen: true, kafka: true } },
    });

    state.kafka = false; // the broker is lost
    expect(await probe('/readyz')).toMatchObject({ status: 503, body: { ok: false, checks: { database: true, kafka: false } } });
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    expect(metrics).toContain('ingest_ready{check="kafka"} 0');
    expect(metrics).toContain('ingest_ready{check="database"} 1');
    expect((await probe('/healthz')).status).toBe(200);
    state.kafka = true;
    state.database = false; // then PostgreSQL
    expect(await probe('/readyz')).toMatchObject({ status: 503, body: { checks: { database: false, kafka: true } } });
    state.database = true;
    expect((await probe('/readyz')).status).toBe(200);

    const before = asked;
    expect((await probe('/healthz')).status).toBe(200);
    expect(asked).toBe(before); // liveness reads no dependency
  });

  it('/readyz answers 503 in time when the checks hang or throw, and /healthz still answers', async () => {
    let mode: 'hang' | 'throw' = 'hang';
    gw = await startTestGateway(
      {},
      {
        isReady: () => (mode === 'hang' ? new Promise(() => {}) : Promise.reject(new Error('connection terminated'))),
        readiness: { timeoutMs: 100, cacheMs: 0 },
      },
    );
    const started = performance.now();
    expect(await probe('/readyz')).toMatchObject({ status: 503, body: { ok: false, checks: { answered_in_time: false } } });
    expect(performance.now() - started).toBeLessThan(2000);
    mode = 'throw';
    expect(await probe('/readyz')).toMatchObject({ status: 503, body: { ok: false, checks: { ready: false } } });
    expect(await probe('/healthz')).toEqual({ status: 200, retryAfter: null, body: { ok: true } });
  });

  it('/readyz reuses an answer for a second: a flood of probes runs the checks once', async () => {
    let asked = 0;
    gw = await startTestGateway({}, { isReady: async () => (asked++, { database: true }) });
    await Promise.all(Array.from({ length: 50 }, () => probe('/readyz')));
    expect(asked).toBe(1);
  });
});
