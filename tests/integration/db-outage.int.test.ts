import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createListener, type Listener } from '@ingest/db';
import { runGateway } from '@ingest/gateway';
import { silentLogger } from '@ingest/runtime/testing';
import { CRON_SECRET, INGEST_SECRET, get, post, startPipeline, waitFor, type HttpResult, type TestPipeline } from '../support/pipeline.ts';
import { startTcpProxy, throughProxy, type TcpProxy } from '../support/tcpProxy.ts';

// Outages (docs/operations.md "Faults and outages"): the services reach PostgreSQL through a
// proxy the test can cut, as an outage or a network fault would; the assertions read the
// database directly.
let p: TestPipeline;
let proxy: TcpProxy;

beforeAll(async () => {
  proxy = await startTcpProxy({ target: { host: '127.0.0.1', port: 5432 } });
  p = await startPipeline({
    serviceDatabaseUrl: (direct) => throughProxy(direct, proxy),
    env: { API_KEY_PEPPER: 'outage-pepper-0123456789abcdef0123456789' },
  });
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

describe('a PostgreSQL outage', () => {
  it('every endpoint answers 503 with Retry-After while it lasts, never 500 and never an accepted command it then forgets; it recovers by itself', async () => {
    const shop = `outage-${randomUUID().slice(0, 6)}.example`;
    const before = await products(shop, ['B0'], { Prefer: 'respond-async' });
    expect(before.status).toBe(202);
    const resultUrl = `${p.url()}${before.json.result_url}`;
    await waitFor(async () => (await get(resultUrl, ING)).status === 200, 15_000, 'the first command applied');
    // D28: a key used before the outage (cached) and one never used: neither is answered 401 while
    // PostgreSQL cannot say whether it is valid.
    const mint = async () =>
      ((await post(`${p.url()}/api/admin/keys`, { shop, scopes: ['products:write', 'commands:read'] }, ING)).json as { key: string }).key;
    const [warm, cold] = [await mint(), await mint()];
    expect((await get(resultUrl, { authorization: `Bearer ${warm}` })).status).toBe(200);

    await proxy.cut('refuse');
    try {
      // The result lookup once failed with 500.
      expect503(await get(resultUrl, ING));
      expect503(await get(resultUrl, { 'x-cron-secret': CRON_SECRET, 'x-shop': shop }));
      // A command must not be answered 202 unless its status is recorded: 503 before it is appended.
      expect503(await products(shop, ['B1']));
      expect503(await products(shop, ['B2'], { Prefer: 'respond-async' }));
      expect503(
        await post(
          `${p.url()}/api/products/bulk-upsert`,
          { products: [{ barcode: 'B3', product_name: 'x' }] },
          { 'x-cron-secret': CRON_SECRET, 'x-shop': shop },
        ),
      );
      expect503(await get(resultUrl, { authorization: `Bearer ${cold}` }));
      expect503(await products(shop, ['B5'], { 'x-ingest-secret': '', authorization: `Bearer ${cold}` }));
      expect503(await products(shop, ['B6'], { 'x-ingest-secret': '', authorization: `Bearer ${warm}` }));
      // A dry run reads the database instead of appending: 503 with Retry-After too.
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

  it('the reply path LISTENs again after the outage: synchronous replies come by notification, not by the 2-second sweep', async () => {
    // A gateway whose LISTEN connection (through the same proxy) the test watches: which replies reached it
    // by notification is read from that connection, not inferred from latencies, which a loaded machine
    // stretches past any bound a sweep could not also meet (CI: four writes under 700 ms).
    const notified = new Set<string>();
    let connects = 0;
    const own = createListener({ connectionString: p.env['DATABASE_URL']!, applicationName: 'ingest-gateway-listen' });
    own.onConnect(() => connects++);
    const listener: Listener = {
      subscribe: (channel, fn) =>
        own.subscribe(channel, (payload) => {
          if (channel === 'command_results') notified.add(payload); // REPLY_CHANNEL of the gateway's reply waiter
          fn(payload);
        }),
      onConnect: (fn) => own.onConnect(fn),
      connected: () => own.connected(),
      close: () => own.close(),
    };
    const gateway = await runGateway(p.env, silentLogger(), { listener });
    try {
      await waitFor(async () => listener.connected(), 15_000, 'the gateway LISTEN connection');
      await proxy.cut('refuse');
      try {
        await waitFor(async () => !listener.connected(), 15_000, 'the gateway LISTEN connection lost');
      } finally {
        await proxy.restore();
      }
      await waitFor(async () => connects >= 2 && listener.connected(), 15_000, 'the gateway LISTEN connection back');
      const shop = `listen-${randomUUID().slice(0, 6)}.example`;
      const write = (barcode: string) =>
        post(`http://127.0.0.1:${gateway.port}/api/ingest/products`, { shop, products: [{ barcode, product_name: `P ${barcode}` }] }, ING);
      await waitFor(async () => (await write('warm')).status === 200, 15_000, 'writes flowing');
      for (let i = 0; i < 4; i++) expect((await write(`L${i}`)).status).toBe(200);
      // Every command answered since the LISTEN connection came back was notified on it (a notification
      // lost with the connection would leave the waiter to the 2-second sweep).
      const { rows } = await p.db.query<{ command_id: string }>('SELECT command_id FROM agent_runtime.command_results WHERE shop = $1', [
        shop,
      ]);
      expect(rows.length).toBeGreaterThanOrEqual(5);
      await waitFor(async () => rows.every((r) => notified.has(r.command_id)), 5_000, 'every reply notified on the LISTEN connection');
    } finally {
      await gateway.stop();
      await own.close();
    }
  });

  it('a projector whose connections are reset in the middle of its transactions does not die, and applies every command exactly once', async () => {
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
