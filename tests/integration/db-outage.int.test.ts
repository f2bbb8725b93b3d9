import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CRON_SECRET, INGEST_SECRET, get, post, startPipeline, waitFor, type HttpResult, type TestPipeline } from '../support/pipeline.ts';
import { startTcpProxy, throughProxy, type TcpProxy } from '../support/tcpProxy.ts';

// Issue 11: the services reach PostgreSQL through a proxy the test can cut, as an outage or a
// network fault would; the assertions read the database directly.
let p: TestPipeline;
let proxy: TcpProxy;

beforeAll(async () => {
  proxy = await startTcpProxy({ target: { host: '127.0.0.1', port: 5432 } });
  p = await startPipeline({ serviceDatabaseUrl: (direct) => throughProxy(direct, proxy) });
});
afterAll(async () => {
  await proxy.restore();
  await p.stop();
  await proxy.stop();
});

const ING = { 'x-ingest-secret': INGEST_SECRET };
const products = (shop: string, barcodes: string[], headers: Record<string, string> = {}) =>
  post(
    `${p.url()}/api/ingest/products`,
    { shop, products: barcodes.map((b) => ({ barcode: b, product_name: `P ${b}` })) },
    { ...ING, ...headers },
  );

function expect503(r: HttpResult): void {
  expect(r.status).toBe(503);
  expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
  expect(r.json).toMatchObject({ ok: false });
}

describe('a PostgreSQL outage (issue 11)', () => {
  it('every endpoint answers 503 with Retry-After while it lasts, never 500 and never an accepted command it then forgets; it recovers by itself', async () => {
    const shop = `outage-${randomUUID().slice(0, 6)}.example`;
    const before = await products(shop, ['B0'], { Prefer: 'respond-async' });
    expect(before.status).toBe(202);
    const resultUrl = `${p.url()}${before.json.result_url}`;
    await waitFor(async () => (await get(resultUrl, ING)).status === 200, 15_000, 'the first command applied');

    await proxy.cut('refuse');
    try {
      // Finding 1: the result lookup failed with 500.
      expect503(await get(resultUrl, ING));
      expect503(await get(resultUrl, { 'x-cron-secret': CRON_SECRET, 'x-shop': shop }));
      // Finding 2: a command must not be answered 202 unless its status is recorded: 503 before it is appended.
      expect503(await products(shop, ['B1']));
      expect503(await products(shop, ['B2'], { Prefer: 'respond-async' }));
      expect503(
        await post(
          `${p.url()}/api/products/bulk-upsert`,
          { products: [{ barcode: 'B3', product_name: 'x' }] },
          { 'x-cron-secret': CRON_SECRET, 'x-shop': shop },
        ),
      );
      // Issue 16: a dry run reads the database instead of appending: 503 with Retry-After too.
      expect503(await post(`${p.url()}/api/ingest/products?dry_run=true`, { shop, products: [{ barcode: 'B4', product_name: 'x' }] }, ING));
      const ready = await get(`${p.url()}/readyz`);
      expect(ready.status).toBe(503);
      expect(ready.json.checks.database).toBe(false);
      expect((await p.projector!.readiness()).database).toBe(false);
    } finally {
      await proxy.restore();
    }

    const restored = Date.now();
    const after = await waitFor(
      async () => {
        const r = await products(shop, ['A1']);
        return r.status === 200 ? r : null;
      },
      20_000,
      'a write accepted again after the outage',
    );
    expect(after.json).toMatchObject({ ok: true, created: 1 });
    expect(Date.now() - restored).toBeLessThan(10_000);
    // Nothing that was refused was applied.
    const { rows } = await p.db.query<{ barcode: string }>('SELECT barcode FROM public.products WHERE shop = $1 ORDER BY barcode', [shop]);
    expect(rows.map((r) => r.barcode)).toEqual(['A1', 'B0']);
    await waitFor(async () => (await get(`${p.url()}/readyz`)).status === 200, 10_000, 'the gateway ready again');
    await waitFor(async () => Object.values(await p.projector!.readiness()).every(Boolean), 10_000, 'the projector ready again');
  });

  it('the reply path LISTENs again after the outage: synchronous replies come by notification, not by the 2-second sweep (finding 5)', async () => {
    await proxy.cut('refuse');
    await new Promise((r) => setTimeout(r, 300));
    await proxy.restore();
    await waitFor(
      async () =>
        (
          await p.db.query(
            `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'ingest-gateway-listen'`,
          )
        ).rows.length > 0,
      15_000,
      'the gateway LISTEN connection back',
    );
    const shop = `listen-${randomUUID().slice(0, 6)}.example`;
    await waitFor(async () => (await products(shop, ['warm'])).status === 200, 15_000, 'writes flowing');
    const times: number[] = [];
    for (let i = 0; i < 4; i++) {
      const t0 = Date.now();
      const r = await products(shop, [`L${i}`]);
      expect(r.status).toBe(200);
      times.push(Date.now() - t0);
    }
    // By the sweep alone each would wait up to 2 s; four all under 700 ms cannot be luck.
    expect(Math.max(...times)).toBeLessThan(700);
  });

  it('a projector whose connections are reset in the middle of its transactions does not die, and applies every command exactly once (finding 3)', async () => {
    const shop = `reset-${randomUUID().slice(0, 6)}.example`;
    const sent = await Promise.all(Array.from({ length: 24 }, (_, i) => products(shop, [`R${i}`], { Prefer: 'respond-async' })));
    expect(sent.every((r) => r.status === 202)).toBe(true);
    for (let i = 0; i < 6; i++) {
      await proxy.cut('reset'); // every open connection reset; the next ones go through again
      await proxy.restore();
      await new Promise((r) => setTimeout(r, 120));
    }
    for (const r of sent)
      await waitFor(async () => (await get(`${p.url()}${r.json.result_url}`, ING)).status === 200, 30_000, `command ${r.json.command_id}`);
    const { rows } = await p.db.query<{ n: number; barcodes: number }>(
      `SELECT count(*)::int AS n, count(DISTINCT barcode)::int AS barcodes FROM public.product_update_logs WHERE shop = $1 AND change_type = 'created'`,
      [shop],
    );
    expect(rows[0]).toEqual({ n: 24, barcodes: 24 });
  });
});
