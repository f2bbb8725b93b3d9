import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProbeServer } from '@ingest/projector';
import { INGEST_SECRET, get, post, startPipeline, waitFor, type TestPipeline } from '../support/pipeline.ts';
import { startTcpProxy, throughProxy, type TcpProxy } from '../support/tcpProxy.ts';

// Readiness with a real dependency loss: the standalone projector's probes (probes.ts, as
// main.ts serves them) over its real readiness, PostgreSQL reached through a proxy the test cuts.
// (Kafka cannot be cut this way: the broker's metadata sends clients to its advertised address.)
let p: TestPipeline;
let proxy: TcpProxy;
let server: Server;
let url: string;

beforeAll(async () => {
  proxy = await startTcpProxy({ target: { host: '127.0.0.1', port: 5432 } });
  p = await startPipeline({ gateway: false, projector: false, serviceDatabaseUrl: (direct) => throughProxy(direct, proxy) });
});
afterAll(async () => {
  await proxy.restore();
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  await p.stop();
  await proxy.stop();
});

describe('the projector /readyz and /healthz', () => {
  it('503 while it starts without PostgreSQL, 200 once joined and connected, 503 when PostgreSQL is lost, 200 when it is back; /healthz 200 throughout', async () => {
    await proxy.cut('refuse');
    const projector = await p.startProjector(); // starts: the database is only needed to do work
    server = createProbeServer({ registry: projector.registry, readiness: projector.readiness, readyCacheMs: 0 });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

    const down = await get(`${url}/readyz`);
    expect(down.status).toBe(503);
    expect(down.headers.get('retry-after')).toBe('5');
    expect(down.json).toMatchObject({ ok: false, checks: { database: false } });
    expect((await get(`${url}/healthz`)).status).toBe(200);
    expect(await (await fetch(`${url}/metrics`)).text()).toContain('ingest_ready{check="database"} 0');

    await proxy.restore();
    const ready = await waitFor(
      async () => {
        const r = await get(`${url}/readyz`);
        return r.status === 200 ? r : null;
      },
      30_000,
      'the projector ready',
    );
    expect(ready.json).toEqual({ ok: true, checks: { consumer: true, database: true, listen: true } });

    // It does its job: a command through a gateway is applied, and the partition reads 0 s behind.
    const gateway = await p.startGateway();
    const r = await post(
      `http://127.0.0.1:${gateway.port}/api/ingest/products`,
      { shop: 'ready.example', products: [{ barcode: '1', product_name: 'x' }] },
      { 'x-ingest-secret': INGEST_SECRET },
    );
    expect(r.status).toBe(200);
    const metrics = await waitFor(
      async () => {
        const text = await (await fetch(`${url}/metrics`)).text();
        return /projector_lag_seconds\{partition="\d+"\} 0\n/.test(text) ? text : null;
      },
      10_000,
      'the partition caught up',
    );
    // (idle connections close after 10 s: only that the pool's series are there is certain)
    expect(metrics).toMatch(/db_pool_connections\{pool="projector",state="idle"\} \d+\n/);
    expect(metrics).toMatch(/db_pool_max_connections\{pool="projector"\} 10\n/);

    await proxy.cut('refuse');
    const lost = await waitFor(
      async () => {
        const x = await get(`${url}/readyz`);
        return x.status === 503 ? x : null;
      },
      10_000,
      'the projector not ready',
    );
    expect(lost.json).toMatchObject({ ok: false, checks: { database: false } });
    expect((await get(`${url}/healthz`)).status).toBe(200);

    await proxy.restore();
    await waitFor(async () => (await get(`${url}/readyz`)).status === 200, 30_000, 'the projector ready again');
  });
});
