import { describe, expect, it } from 'vitest';
import { lintExposition } from '../../testing/exposition.ts';
import { Counter, Gauge, Histogram, createRegistry, registerPoolMetrics } from './metrics.ts';

// /metrics passes Prometheus' naming rules (`promtool check metrics`); this is the
// same check in plain JS so that `npm test` runs it without promtool.
describe('lintExposition', () => {
  it("passes prom-client's default metrics as createRegistry keeps them", async () => {
    const registry = createRegistry({ defaultMetrics: true });
    const text = await registry.metrics();
    expect(text).toContain('# TYPE process_cpu_seconds_total counter');
    expect(text).toContain('# TYPE nodejs_active_handles gauge');
    expect(lintExposition(text)).toEqual([]);
  });

  it('finds the gauges prom-client names *_total, which createRegistry drops (the cause of promtool failing)', async () => {
    const { Registry, collectDefaultMetrics } = await import('prom-client');
    const raw = new Registry();
    collectDefaultMetrics({ register: raw });
    const found = lintExposition(await raw.metrics()).map((p) => p.metric);
    expect(found.sort()).toEqual(['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']);
    const kept = await createRegistry({ defaultMetrics: true }).metrics();
    for (const name of found) expect(kept).not.toContain(`${name} `);
  });

  it('refuses what promtool refuses', async () => {
    const registry = createRegistry();
    new Counter({ name: 'jobs_done', help: 'a counter without _total', registers: [registry] }).inc();
    new Gauge({ name: 'queue_total', help: 'a gauge with _total', registers: [registry] }).set(1);
    new Gauge({ name: 'queueDepth', help: 'camel', registers: [registry] }).set(1);
    new Gauge({ name: 'request_latency_ms', help: 'abbreviated unit', registers: [registry] }).set(1);
    new Gauge({ name: 'request_milliseconds', help: 'not a base unit', registers: [registry] }).set(1);
    new Gauge({ name: 'rows_count', help: 'count suffix', registers: [registry] }).set(1);
    new Gauge({ name: 'labelled', help: 'camel label', labelNames: ['shopId'], registers: [registry] }).set({ shopId: 'a' }, 1);
    new Histogram({ name: 'fine_seconds', help: 'a histogram', registers: [registry] }).observe(1);
    new Counter({ name: 'fine_total', help: 'a counter', registers: [registry] }).inc();
    const problems = lintExposition(await registry.metrics());
    expect(problems.map((p) => `${p.metric}: ${p.problem}`).sort()).toEqual(
      [
        'jobs_done: counter metrics should have "_total" suffix',
        "labelled: label names should be written in 'snake_case' not 'camelCase': shopId",
        "queueDepth: metric names should be written in 'snake_case' not 'camelCase'",
        'queue_total: non-counter metrics should not have "_total" suffix',
        'request_latency_ms: metric names should not contain abbreviated units',
        'request_milliseconds: use base units (seconds, bytes, ratio) instead of "milliseconds"',
        'rows_count: non-histogram and non-summary metrics should not have "count" suffix',
      ].sort(),
    );
    expect(lintExposition('# TYPE x gauge\nx 1\n')).toEqual([{ metric: 'x', problem: 'no help text' }]);
    expect(lintExposition('y 1\n')).toEqual([{ metric: 'y', problem: 'samples without a TYPE' }]);
  });
});

describe('registerPoolMetrics', () => {
  it("reads each pool's counters when scraped, labelled by pool; two pools share one registry", async () => {
    const registry = createRegistry();
    const a = { totalCount: 7, idleCount: 2, waitingCount: 3, options: { max: 10 } };
    registerPoolMetrics(registry, 'gateway', a);
    registerPoolMetrics(registry, 'projector', { totalCount: 1, idleCount: 1, waitingCount: 0, options: {} });
    let text = await registry.metrics();
    expect(text).toContain('db_pool_connections{pool="gateway",state="idle"} 2');
    expect(text).toContain('db_pool_connections{pool="gateway",state="in_use"} 5');
    expect(text).toContain('db_pool_waiting_clients{pool="gateway"} 3');
    expect(text).toContain('db_pool_max_connections{pool="gateway"} 10');
    expect(text).toContain('db_pool_connections{pool="projector",state="in_use"} 0');
    a.waitingCount = 0;
    text = await registry.metrics();
    expect(text).toContain('db_pool_waiting_clients{pool="gateway"} 0');
    expect(lintExposition(text)).toEqual([]);
  });
});

describe('nodejs_heap_live_bytes', () => {
  it('is the heap used after the last major collection', async () => {
    const { setFlagsFromString, getHeapStatistics } = await import('node:v8');
    const { runInNewContext } = await import('node:vm');
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as (o?: { type: 'major' }) => void;
    const registry = createRegistry({ defaultMetrics: true });
    gc({ type: 'major' });
    const live = getHeapStatistics().used_heap_size;
    await new Promise((r) => setTimeout(r, 50)); // gc entries are delivered asynchronously
    const text = await registry.metrics();
    const m = /^nodejs_heap_live_bytes (\d+)$/m.exec(text);
    expect(m).not.toBeNull();
    // within 5 % of what the heap held right after the collection (the observer reads it a moment later)
    expect(Math.abs(Number(m![1]) - live) / live).toBeLessThan(0.05);
    expect(lintExposition(text)).toEqual([]);
  });
});
