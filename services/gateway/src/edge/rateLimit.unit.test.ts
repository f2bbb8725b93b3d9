import { afterEach, describe, expect, it } from 'vitest';
import type { GatewayConfig } from '../config.ts';
import type { SharedRateBuckets } from './shopAdmission.ts';
import { rateLimit, rateLimitPolicy } from './shopAdmission.ts';
import { postJson, startTestGateway, TEST_INGEST_SECRET, type HttpAnswer, type TestGateway } from '../../testing/testGateway.ts';

// The shop's admission budget as clients see it (D28, draft-ietf-httpapi-ratelimit-headers), and the
// lines/s budget shared by every gateway: two gateways leasing from one bucket admit what one
// would, not twice as much.
const gateways: TestGateway[] = [];
afterEach(async () => {
  await Promise.all(gateways.splice(0).map((g) => g.close()));
});
const start = async (config: Partial<GatewayConfig>, rateBuckets?: SharedRateBuckets) => {
  const g = await startTestGateway(config, rateBuckets ? { rateBuckets } : {});
  gateways.push(g);
  return g;
};
const write = (g: TestGateway, shop: string, lines: number): Promise<HttpAnswer> =>
  postJson(
    `${g.url}/api/ingest/products`,
    { shop, products: Array.from({ length: lines }, (_, i) => ({ barcode: `B${i}`, product_name: 'N' })) },
    { 'x-ingest-secret': TEST_INGEST_SECRET },
  );

/** One token bucket per shop, as agent_runtime.shop_rate_buckets keeps it (ledger/shopRateBuckets.ts), on a clock the test moves. */
function memoryBuckets(ratePerS: number, burst: number, clock: () => number) {
  const buckets = new Map<string, { tokens: number; at: number }>();
  let leases = 0;
  const shared: SharedRateBuckets = {
    lease: async (shop, want) => {
      leases++;
      const b = buckets.get(shop) ?? { tokens: burst, at: clock() };
      b.tokens = Math.min(burst, b.tokens + ((clock() - b.at) / 1000) * ratePerS);
      b.at = clock();
      const granted = Math.max(0, Math.min(want, b.tokens));
      b.tokens -= granted;
      buckets.set(shop, b);
      return { granted, left: b.tokens };
    },
  };
  return { shared, leases: () => leases };
}

describe('RateLimit-Policy and RateLimit (D28)', () => {
  it('formats the policies as Structured Fields lists, the lines budget in its own unit', () => {
    expect(rateLimitPolicy({ maxInflightRequests: 256, lines: null })).toBe('"inflight";q=256;qu="concurrency"');
    expect(rateLimitPolicy({ maxInflightRequests: 8, lines: { ratePerS: 100, burst: 1000, remaining: 0 } })).toBe(
      '"inflight";q=8;qu="concurrency", "lines";q=1000;w=10;qu="line"',
    );
    expect(rateLimit({ maxInflightRequests: 8, inflight: 3, lines: { ratePerS: 100, burst: 1000, remaining: 250.7 } })).toBe(
      '"inflight";r=5, "lines";r=250;t=8',
    );
    expect(rateLimit({ maxInflightRequests: 8, inflight: 9, lines: { ratePerS: 100, burst: 1000, remaining: -40 } })).toBe(
      '"inflight";r=0, "lines";r=0;t=10',
    );
  });

  it('are on every admitted write answer: what the shop has in flight, this request counted', async () => {
    const g = await start({});
    const r = await write(g, 'rl-a.example', 1);
    expect(r.status).toBe(202);
    expect(r.headers.get('ratelimit-policy')).toBe('"inflight";q=256;qu="concurrency"');
    expect(r.headers.get('ratelimit')).toBe('"inflight";r=255');
  });

  it('count down the lines of a shop, and a 429 says r=0 beside its Retry-After', async () => {
    const g = await start({ shopRateLinesPerS: 10, shopBurstLines: 30 });
    const first = await write(g, 'rl-b.example', 20);
    expect(first.headers.get('ratelimit-policy')).toBe('"inflight";q=256;qu="concurrency", "lines";q=30;w=3;qu="line"');
    expect(first.headers.get('ratelimit')).toMatch(/^"inflight";r=255, "lines";r=(9|10|11);t=[23]$/);
    await write(g, 'rl-b.example', 20);
    const refused = await write(g, 'rl-b.example', 1);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(refused.headers.get('ratelimit')).toMatch(/"lines";r=0;t=\d+$/);
    expect(refused.headers.get('ratelimit-policy')).toContain('"lines";q=30');
  });
});

describe('the lines/s budget across gateways', () => {
  const config = { shopRateLinesPerS: 100, shopBurstLines: 200 };
  async function admitted(gs: TestGateway[], shop: string, requests: number): Promise<number> {
    let lines = 0;
    for (let i = 0; i < requests; i++) {
      const r = await write(gs[i % gs.length]!, shop, 10);
      if (r.status === 202) lines += 10;
      else expect(r.status).toBe(429);
    }
    return lines;
  }

  it('two gateways sharing the bucket admit what one does; each alone would admit its own burst', async () => {
    const now = performance.now();
    const { shared, leases } = memoryBuckets(config.shopRateLinesPerS, config.shopBurstLines, () => now);
    const sharing = [await start(config, shared), await start(config, shared)];
    const alone = [await start(config), await start(config)];
    // A frozen clock: no refill, so the burst is all there is.
    const together = await admitted(sharing, 'rl-c.example', 60);
    const apart = await admitted(alone, 'rl-c.example', 60);
    expect(together).toBe(200);
    expect(apart).toBeGreaterThanOrEqual(400);
    // About a second of the rate (100 lines, 10 requests) per lease, not one lease per request.
    expect(leases()).toBeLessThan(15);
  });

  it('admits when the shared bucket cannot be reached (the budget is fairness; the outage answers elsewhere)', async () => {
    const g = await start(config, {
      lease: async () => {
        throw new Error('connection refused');
      },
    });
    expect((await write(g, 'rl-d.example', 10)).status).toBe(202);
  });
});
