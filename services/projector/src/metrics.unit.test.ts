import { describe, expect, it } from 'vitest';
import { createRegistry, registerPoolMetrics } from '@ingest/runtime';
import { lintExposition } from '@ingest/runtime/testing';
import { PartitionLag, projectorMetrics, prunerMetrics, relayMetrics } from './metrics.ts';

// The projector's lag in seconds per partition, the relay's backlog age, and the
// projector process's /metrics under Prometheus' naming rules.
describe('PartitionLag', () => {
  const clock = () => {
    const c = { t: 1_000_000, now: () => c.t };
    return c;
  };

  it('is 0 for a caught-up partition and counts from the moment it fell behind', () => {
    const c = clock();
    const lag = new PartitionLag(c.now);
    lag.batchStarted(0);
    lag.applied(0, c.t - 20);
    c.t += 5;
    lag.batchEnded(0, 0);
    expect(lag.seconds()).toEqual(new Map([[0, 0]]));
    c.t += 3_600_000; // an hour without commands: still caught up
    expect(lag.seconds().get(0)).toBe(0);
    lag.batchStarted(0); // a new command, which arrived now (the consumer was waiting for it)
    c.t += 500;
    expect(lag.seconds().get(0)).toBeCloseTo(0.5, 3);
    lag.applied(0, c.t - 400); // applied: the newest applied command is 0.4 s old
    expect(lag.seconds().get(0)).toBeCloseTo(0.4, 3);
    lag.batchEnded(0, 0);
    expect(lag.seconds().get(0)).toBe(0);
    c.t += 1_000;
    lag.batchStarted(0); // soon after, without the forgetting delay: also counted from its arrival
    c.t += 200;
    expect(lag.seconds().get(0)).toBeCloseTo(0.2, 3);
  });

  it('grows one second per second while a backlog waits and nothing is applied (a stuck projector)', () => {
    const c = clock();
    const lag = new PartitionLag(c.now);
    lag.batchStarted(3);
    lag.applied(3, c.t - 90_000); // a command accepted 90 s ago
    lag.batchEnded(3, 1_000); // a backlog is left
    expect(lag.seconds().get(3)).toBeCloseTo(90, 3);
    lag.batchStarted(3); // stuck in this batch (the database is down)
    c.t += 10_000;
    expect(lag.seconds().get(3)).toBeCloseTo(100, 3);
    c.t += 60_000;
    expect(lag.seconds().get(3)).toBeCloseTo(160, 3);
  });

  it('counts from its first batch when nothing was applied yet, and a failed batch leaves it behind', () => {
    const c = clock();
    const lag = new PartitionLag(c.now);
    lag.batchStarted(1);
    c.t += 2_000;
    lag.batchEnded(1, null);
    expect(lag.seconds().get(1)).toBeCloseTo(2, 3);
  });

  it('forgets a partition left behind and not seen for a while (it moved to another member)', () => {
    const c = clock();
    const lag = new PartitionLag(c.now, 30_000);
    lag.batchStarted(2);
    lag.applied(2, c.t);
    lag.batchEnded(2, 50);
    c.t += 29_000;
    expect(lag.seconds().has(2)).toBe(true);
    c.t += 2_000;
    expect(lag.seconds().has(2)).toBe(false);
  });

  it('is served as projector_lag_seconds{partition}, computed when scraped', async () => {
    const c = clock();
    const registry = createRegistry();
    const { lag } = projectorMetrics(registry, new PartitionLag(c.now));
    lag.batchStarted(0);
    lag.batchEnded(0, 0);
    lag.batchStarted(1);
    lag.applied(1, c.t - 42_000);
    const text = await registry.metrics();
    expect(text).toContain('projector_lag_seconds{partition="0"} 0');
    expect(text).toContain('projector_lag_seconds{partition="1"} 42');
  });
});

describe('relay_outbox_oldest_seconds', () => {
  it("is the oldest unpublished row's age at the last count plus the time since, and 0 with none or without the lead", async () => {
    let t = 0;
    const registry = createRegistry();
    const m = relayMetrics(registry, () => t);
    const value = async () => (await registry.getSingleMetric('relay_outbox_oldest_seconds')!.get()).values[0]?.value;
    expect(await value()).toBe(0);
    m.setOldest(12);
    t += 3_000;
    expect(await value()).toBe(15);
    m.setOldest(null);
    expect(await value()).toBe(0);
  });
});

describe("the projector process's /metrics", () => {
  it("passes Prometheus' naming rules, with every metric it registers and the defaults", async () => {
    const registry = createRegistry({ defaultMetrics: true });
    const p = projectorMetrics(registry);
    const r = relayMetrics(registry);
    const pr = prunerMetrics(registry);
    registerPoolMetrics(registry, 'projector', { totalCount: 2, idleCount: 1, waitingCount: 0, options: { max: 10 } });
    p.applied.inc({ kind: 'products.upsert', outcome: 'applied' });
    p.retries.inc({ class: 'transient' });
    p.groupSize.observe(3);
    p.duration.observe({ kind: 'products.upsert' }, 0.01);
    p.lagOffsets.set({ partition: '0' }, 4);
    p.lag.batchStarted(0);
    r.published.inc();
    r.publishSeconds.observe(0.002);
    pr.deleted.inc({ table: 'agent_runtime.outbox' });
    pr.seconds.observe(0.1);
    const text = await registry.metrics();
    for (const name of [
      'projector_commands_retrying',
      'relay_outbox_oldest_seconds',
      'relay_publish_seconds_bucket',
      'db_pool_waiting_clients',
    ])
      expect(text).toContain(name);
    expect(lintExposition(text)).toEqual([]);
  });
});
