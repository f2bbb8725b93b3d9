import { afterEach, describe, expect, it } from 'vitest';
import type { Pool } from '@ingest/db';
import type { GatewayConfig } from '../config.ts';
import { linesOf } from './shopAdmission.ts';
import { startTestGateway, TEST_CRON_SECRET, TEST_INGEST_SECRET, type TestGateway } from '../../testing/testGateway.ts';

// Fair admission per shop (docs/api.md#fair-admission-per-shop), at the HTTP edge with in-memory
// ports. A shop over its own budget gets 429 + Retry-After in the spec's error shape, nothing
// recorded or appended, while another shop is admitted at once; every budget is released on every
// exit path.
const gateways: TestGateway[] = [];
afterEach(async () => {
  await Promise.all(gateways.splice(0).map((g) => g.close()));
});

/** A pool whose INSERT of a command request for `shop` waits until `open()` (the request stays in flight). */
function gatedPool(shop: string): { pool: Pool; open(): void; recorded: string[] } {
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const recorded: string[] = [];
  const pool = {
    query: async (sql: string, params: unknown[] = []) => {
      if (sql.includes('INSERT INTO agent_runtime.command_requests')) {
        recorded.push(String(params[1]));
        if (params[1] === shop) await gate;
      }
      return { rows: [], rowCount: 0 };
    },
  } as unknown as Pool;
  return { pool, open, recorded };
}

async function start(config: Partial<GatewayConfig>, pool?: Pool): Promise<TestGateway> {
  const gw = await startTestGateway(config, pool ? { pool } : {});
  gateways.push(gw);
  return gw;
}

const products = (shop: string, n = 1, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ shop, products: Array.from({ length: n }, (_, i) => ({ barcode: `B${i}`, product_name: 'N' })), ...extra });

function post(gw: TestGateway, body: string, signal?: AbortSignal) {
  return fetch(`${gw.url}/api/ingest/products`, {
    method: 'POST',
    headers: { 'x-ingest-secret': TEST_INGEST_SECRET, 'content-type': 'application/json' },
    body,
    ...(signal ? { signal } : {}),
  });
}

async function expectShop429(res: Response, shop: string): Promise<void> {
  expect(res.status).toBe(429);
  expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  const body = (await res.json()) as Record<string, unknown>;
  expect(Object.keys(body).sort()).toEqual(['error', 'ok']);
  expect(body['ok']).toBe(false);
  expect(body['error']).toContain(`shop ${shop}`);
  expect(body['error']).toMatch(/per shop/);
}

const until = async (check: () => boolean): Promise<void> => {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(check()).toBe(true);
};

describe('fair admission per shop', () => {
  it('linesOf: the largest top-level array of the body, at least 1', () => {
    expect(linesOf({ shop: 'a', products: [1, 2, 3] })).toBe(3);
    expect(linesOf({ shop: 'a', lines: [1], rows: [1, 2] })).toBe(2);
    expect(linesOf({ shop: 'a' })).toBe(1);
  });

  it('a shop past its lines/s bucket gets 429 + Retry-After for that shop, nothing appended; another shop is admitted at once', async () => {
    const gw = await start({ shopRateLinesPerS: 1, shopBurstLines: 10 });
    // Admitted while the bucket is not empty; 12 lines from 10 leave it 2 lines in debt.
    expect((await post(gw, products('noisy.example', 12))).status).toBe(202);
    const refused = await post(gw, products('noisy.example', 1));
    await expectShop429(refused, 'noisy.example');
    // One line a second: the debt of two lines is paid in about 2 s.
    expect(Number(refused.headers.get('retry-after'))).toBe(2);
    expect(gw.appended.map((c) => c.shop)).toEqual(['noisy.example']);
    expect((await post(gw, products('quiet.example', 10))).status).toBe(202);
    expect(gw.appended.map((c) => c.shop)).toEqual(['noisy.example', 'quiet.example']);
  });

  it('a body larger than the burst is admitted on a full bucket (it could never be otherwise), and leaves the shop in debt', async () => {
    const gw = await start({ shopRateLinesPerS: 1, shopBurstLines: 5 });
    expect((await post(gw, products('big.example', 8))).status).toBe(202);
    await expectShop429(await post(gw, products('big.example', 1)), 'big.example');
  });

  it('admitted while the bucket holds anything: a body of 5 lines on 1 line left goes through and leaves debt', async () => {
    const gw = await start({ shopRateLinesPerS: 1, shopBurstLines: 10 });
    expect((await post(gw, products('edge.example', 9))).status).toBe(202);
    expect((await post(gw, products('edge.example', 5))).status).toBe(202);
    await expectShop429(await post(gw, products('edge.example', 1)), 'edge.example');
  });

  it('a shop over budget is refused on the raw body, before it is parsed: whatever follows its shop is not read', async () => {
    const gw = await start({ shopRateLinesPerS: 1, shopBurstLines: 1 });
    expect((await post(gw, products('raw.example', 3))).status).toBe(202);
    // Not JSON after the shop: parsed, it would be a 400; its shop is certain from the bytes, and over budget.
    await expectShop429(await post(gw, '{"shop":"raw.example","products":[{"barcode":'), 'raw.example');
    // Another shop's broken body is parsed and refused as before.
    expect((await post(gw, '{"shop":"other.example","products":[{"barcode":')).status).toBe(400);
    expect(gw.appended.map((c) => c.shop)).toEqual(['raw.example']);
  });

  it('where the raw body does not make the shop certain, it is read from the parsed body, with the same decision', async () => {
    const gw = await start({ shopRateLinesPerS: 1, shopBurstLines: 1 });
    expect((await post(gw, products('late.example', 3))).status).toBe(202);
    // Shop not the first key; shop spelled with an escape; shop given twice (JSON.parse keeps the last).
    await expectShop429(
      await post(gw, JSON.stringify({ products: [{ barcode: 'B', product_name: 'N' }], shop: 'late.example' })),
      'late.example',
    );
    await expectShop429(await post(gw, '{"shop":"late\u002eexample","products":[{"barcode":"B","product_name":"N"}]}'), 'late.example');
    expect((await post(gw, '{"shop":"late.example","shop":"fresh.example","products":[{"barcode":"B","product_name":"N"}]}')).status).toBe(
      202,
    );
    expect(gw.appended.map((c) => c.shop)).toEqual(['late.example', 'fresh.example']);
  });

  it('the x-shop header of products bulk-upsert names the shop', async () => {
    const gw = await start({ shopRateLinesPerS: 1, shopBurstLines: 3 });
    const bulk = (shop: string) =>
      fetch(`${gw.url}/api/products/bulk-upsert`, {
        method: 'POST',
        headers: { 'x-cron-secret': TEST_CRON_SECRET, 'x-shop': shop, 'content-type': 'application/json' },
        body: JSON.stringify({ products: [1, 2, 3, 4].map((i) => ({ barcode: `B${i}`, product_name: 'N' })) }),
      });
    expect((await bulk('cron.example')).status).toBe(202);
    await expectShop429(await bulk('cron.example'), 'cron.example');
    expect((await bulk('other.example')).status).toBe(202);
  });

  it('requests in flight: the shop at its limit gets 429 while another shop is admitted; the budget comes back when the answer is sent', async () => {
    const gated = gatedPool('slow.example');
    const gw = await start({ shopMaxInflightRequests: 1 }, gated.pool);
    const first = post(gw, products('slow.example'));
    await until(() => gated.recorded.includes('slow.example'));
    await expectShop429(await post(gw, products('slow.example')), 'slow.example');
    expect((await post(gw, products('fast.example'))).status).toBe(202);
    gated.open();
    expect((await first).status).toBe(202);
    expect((await post(gw, products('slow.example'))).status).toBe(202);
  });

  it('bytes in flight: a shop holding a body cannot add another past SHOP_MAX_INFLIGHT_BYTES; alone, any body fits', async () => {
    const gated = gatedPool('heavy.example');
    const gw = await start({ shopMaxInflightBytes: 1_024 }, gated.pool);
    // 20 products: about 720 bytes.
    const first = post(gw, products('heavy.example', 20));
    await until(() => gated.recorded.includes('heavy.example'));
    await expectShop429(await post(gw, products('heavy.example', 20)), 'heavy.example');
    // A small one still fits beside it.
    const small = post(gw, products('heavy.example'));
    await until(() => gated.recorded.filter((s) => s === 'heavy.example').length === 2);
    gated.open();
    expect((await first).status).toBe(202);
    expect((await small).status).toBe(202);
  });

  it('released on a client abort: the aborted request no longer counts against its shop', async () => {
    const gated = gatedPool('gone.example');
    const gw = await start({ shopMaxInflightRequests: 1 }, gated.pool);
    const abort = new AbortController();
    const first = post(gw, products('gone.example'), abort.signal).catch((e: unknown) => e);
    await until(() => gated.recorded.includes('gone.example'));
    abort.abort();
    expect(await first).toBeInstanceOf(Error);
    // The gate is still closed: the new request is admitted only because the aborted one was released.
    const next = post(gw, products('gone.example'));
    await until(() => gated.recorded.filter((s) => s === 'gone.example').length === 2);
    gated.open();
    expect((await next).status).toBe(202);
  });

  it('released on an error answer: a refused body (400) and a failed append (503) give the budget back', async () => {
    const gw = await start({ shopMaxInflightRequests: 1 });
    const bad = await post(gw, JSON.stringify({ shop: 'err.example', products: 'nope' }));
    expect(bad.status).toBe(400);
    expect((await post(gw, products('err.example'))).status).toBe(202);

    const failing = await startTestGateway(
      { shopMaxInflightRequests: 1 },
      {
        commandLog: {
          appendCommand: async () => {
            throw new Error('broker down');
          },
        },
      },
    );
    gateways.push(failing);
    expect((await post(failing, products('err.example'))).status).toBe(503);
    expect((await post(failing, products('err.example'))).status).toBe(503);
  });

  it('a body without a shop is not counted: the route answers 400 as before', async () => {
    const gw = await start({ shopMaxInflightRequests: 1, shopBurstLines: 1 });
    for (let i = 0; i < 3; i++) expect((await post(gw, JSON.stringify({ products: [] }))).status).toBe(400);
  });

  it('the global in-flight budget (D13) still answers first, before the body is read', async () => {
    const gw = await start({ maxInflightBytes: 1_024, bodyLimitBytes: 10_000 });
    const res = await post(gw, products('any.example', 20));
    expect(res.status).toBe(413);
    expect(gw.appended).toEqual([]);
  });
});
