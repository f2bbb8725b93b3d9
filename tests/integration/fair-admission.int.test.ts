import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shopRateBuckets } from '@ingest/db';
import { partitionForKey } from '@ingest/kafka';
import { INGEST_SECRET, post, startPipeline, waitFor, type HttpResult, type TestPipeline } from '../support/pipeline.ts';

// Fair admission per shop on the real gateway, broker, database and projector: one shop over its own
// budgets gets 429 with Retry-After and nothing of its refused requests is recorded or appended,
// while the other shops are answered 200 with their counts meanwhile. The quiet shops' latency with
// and without a noisy shop at 10x the capacity is bench B7's to measure (an idle machine; four test
// files run at once here); what is asserted here is what the budgets decide, exactly.
let p: TestPipeline;
const PARTITIONS = 3; // the test topics' (tests/support/pipeline.ts)
const INFLIGHT = 4;
const RATE = 100;
const BURST = 100;
beforeAll(async () => {
  p = await startPipeline({
    env: {
      SHOP_MAX_INFLIGHT_REQUESTS: String(INFLIGHT),
      SHOP_RATE_LINES_PER_S: String(RATE),
      SHOP_BURST_LINES: String(BURST),
    },
  });
});
afterAll(async () => {
  await p.stop();
});

const h = { 'x-ingest-secret': INGEST_SECRET };
const products = (shop: string, tag: string, lines: number, gateway = 0) =>
  post(
    `${p.url(gateway)}/api/ingest/products`,
    // The shop first, as most clients write it: a refusal is then taken on the raw bytes (firstShop).
    { shop, products: Array.from({ length: lines }, (_, i) => ({ barcode: `${tag}-${i}`, product_name: tag })) },
    h,
  );

/** A shop name whose commands go to the given partition. */
const shopOn = (partition: number, tag: string): string => {
  for (let i = 0; ; i++) {
    const shop = `${tag}-${i}-${randomUUID().slice(0, 4)}.example`;
    if (partitionForKey(shop, PARTITIONS) === partition) return shop;
  }
};

const recorded = async (shop: string): Promise<number> =>
  (await p.db.query<{ n: number }>('SELECT count(*)::int AS n FROM agent_runtime.command_requests WHERE shop = $1', [shop])).rows[0]!.n;

function expectShop429(r: HttpResult, shop: string): void {
  expect(r.status, r.text).toBe(429);
  expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  expect(r.headers.get('x-error-code')).toBe('shop_over_budget');
  expect(r.json).toEqual({ ok: false, error: expect.stringContaining(`shop ${shop}`) });
}

/** Quiet shops, each sending `n` one-line requests in turn; every answer must be a 200 with its count. */
async function quietTraffic(shops: string[], n: number, tag: string): Promise<void> {
  await Promise.all(
    shops.map(async (shop) => {
      for (let i = 0; i < n; i++) {
        const r = await products(shop, `${tag}-${i}`, 1);
        expect(r.status, r.text).toBe(200);
        expect(r.json).toMatchObject({ created: 1 });
      }
    }),
  );
}

describe('fair admission per shop on the real pipeline', () => {
  it('a shop holding its requests in flight gets 429 for more; other shops are answered 200 meanwhile', async () => {
    const noisy = shopOn(0, 'held');
    const quiet = [shopOn(1, 'quiet-a'), shopOn(2, 'quiet-b')];
    expect((await products(noisy, 'FIRST', 1)).status).toBe(200);

    // The test holds the noisy shop's lock (the one every projector transaction of that shop takes
    // first): its next requests stay in flight, each waiting for its result.
    const holder = await p.db.connect();
    try {
      await holder.query('BEGIN');
      await holder.query(`SELECT pg_advisory_xact_lock(hashtextextended(current_schema() || '/' || $1, 0))`, [noisy]);
      const held = Array.from({ length: INFLIGHT }, (_, i) => products(noisy, `HELD-${i}`, 1));
      await waitFor(async () => (await recorded(noisy)) === 1 + INFLIGHT, 15_000, 'the held requests admitted');

      const refused = await Promise.all(Array.from({ length: 12 }, (_, i) => products(noisy, `OVER-${i}`, 1)));
      for (const r of refused) expectShop429(r, noisy);
      await quietTraffic(quiet, 3, 'MEANWHILE');
      // Nothing of the refused requests was recorded (nor appended: their commands would be recorded first).
      expect(await recorded(noisy)).toBe(1 + INFLIGHT);

      await holder.query('COMMIT');
      for (const r of await Promise.all(held)) expect(r.status, r.text).toBe(200);
    } finally {
      await holder.query('ROLLBACK').catch(() => {});
      holder.release();
    }
    // Its budget is back once its answers are sent.
    expect((await products(noisy, 'AFTER', 1)).status).toBe(200);
  });

  it('a shop past its lines/s budget gets only 429 with Retry-After beyond it; other shops are answered 200 meanwhile', async () => {
    const noisy = shopOn(0, 'burst');
    const quiet = [shopOn(1, 'calm-a'), shopOn(2, 'calm-b')];
    const LINES = 20;
    const started = performance.now();
    const answers: HttpResult[] = [];
    // 60 requests of 20 lines (1,200 lines, 12 s of its budget) as fast as 8 connections allow.
    let sent = 0;
    const burst = Promise.all(
      Array.from({ length: 8 }, async () => {
        while (sent < 60) answers.push(await products(noisy, `B-${sent++}`, LINES));
      }),
    );
    await quietTraffic(quiet, 3, 'CALM');
    await burst;
    const seconds = (performance.now() - started) / 1000;

    const admitted = answers.filter((r) => r.status === 200);
    for (const r of answers.filter((x) => x.status !== 200)) expectShop429(r, noisy);
    // The bucket (100 lines) and what it refilled at 100 lines/s while the burst lasted: admitted while not
    // empty, so at most one more body than the lines allow. At least the first INFLIGHT (4 × 20 lines fit
    // the bucket); a fifth only if one of them was answered before the burst's refusals ran out, which
    // refusals taken before the app make a matter of timing.
    expect(admitted.length).toBeGreaterThanOrEqual(Math.min(INFLIGHT, BURST / LINES));
    expect(admitted.length).toBeLessThanOrEqual(Math.ceil((BURST + RATE * seconds) / LINES) + 1);
    expect(answers.length - admitted.length).toBeGreaterThan(0);
    expect(await recorded(noisy)).toBe(admitted.length);
  });

  it('two gateways share one lines/s budget per shop (leased from PostgreSQL), and every answer says what is left', async () => {
    if (p.gateways.length < 2) await p.startGateway();
    const shop = shopOn(0, 'shared');
    const LINES = 10;
    const started = performance.now();
    const answers: HttpResult[] = [];
    // 40 requests of 10 lines (400 lines, 4 s of its budget), alternating between the two gateways.
    for (let i = 0; i < 40; i++) answers.push(await products(shop, `S-${i}`, LINES, i % 2));
    const seconds = (performance.now() - started) / 1000;
    const admitted = answers.filter((r) => r.status === 200);
    for (const r of answers.filter((x) => x.status !== 200)) expectShop429(r, shop);
    // One bucket for both: the burst and its refill while the requests ran, plus at most one body of
    // debt per gateway. Two buckets of their own would admit twice the burst.
    const bound = BURST + RATE * seconds + 2 * LINES;
    expect(admitted.length * LINES).toBeLessThanOrEqual(bound);
    expect(admitted.length * LINES).toBeGreaterThanOrEqual(BURST / 2);
    // The IETF fields on the answers of both gateways, and on a refusal.
    for (const r of admitted) {
      expect(r.headers.get('ratelimit-policy')).toBe(`"inflight";q=${INFLIGHT};qu="concurrency", "lines";q=${BURST};w=1;qu="line"`);
      expect(r.headers.get('ratelimit')).toMatch(/^"inflight";r=\d+, "lines";r=\d+;t=\d+$/);
    }
    const refused = answers.find((r) => r.status === 429);
    if (refused) expect(refused.headers.get('ratelimit')).toMatch(/"lines";r=0;t=\d+$/);

    // What a lease costs, against the per-request round trip it replaces: one statement on the shop's row.
    const timings: number[] = [];
    for (let i = 0; i < 200; i++) {
      const t = performance.now();
      await shopRateBuckets.lease(p.db, `lease-cost-${p.id}`, 1, { ratePerS: 1e6, burst: 1e6 });
      timings.push(performance.now() - t);
    }
    timings.sort((a, b) => a - b);
    console.log(
      `shared lines budget: ${admitted.length * LINES} lines admitted of ${answers.length * LINES} in ${seconds.toFixed(2)} s ` +
        `(bound ${bound.toFixed(0)}); a lease: p50 ${timings[100]!.toFixed(3)} ms, p99 ${timings[198]!.toFixed(3)} ms`,
    );
  });
});
