import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { createRegistry } from '@ingest/runtime';
import { createProbeServer } from './probes.ts';

// Probes of the standalone projector: /readyz follows its checks (consumer joined,
// PostgreSQL, LISTEN) both ways; /healthz is liveness only.
let server: Server;
afterEach(() => new Promise((resolve) => server.close(resolve)));

const start = async (readiness: () => Promise<Record<string, boolean>>, opts: { readyTimeoutMs?: number } = {}) => {
  server = createProbeServer({ registry: createRegistry(), readiness, readyCacheMs: 0, ...opts });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return async (path: string, method = 'GET') => {
    const r = await fetch(`${url}${path}`, { method });
    return { status: r.status, retryAfter: r.headers.get('retry-after'), body: await r.text() };
  };
};

describe('the projector probes', () => {
  it('/readyz: 503 before the group is joined, 200 when all checks pass, 503 when PostgreSQL is lost, 200 when it is back', async () => {
    const state = { consumer: false, database: true, listen: true };
    let asked = 0;
    const get = await start(async () => (asked++, { ...state }));
    expect(await get('/readyz')).toEqual({ status: 503, retryAfter: '5', body: JSON.stringify({ ok: false, checks: state }) });
    expect((await get('/healthz')).status).toBe(200);
    state.consumer = true;
    expect(await get('/readyz')).toEqual({ status: 200, retryAfter: null, body: JSON.stringify({ ok: true, checks: state }) });
    state.database = false;
    state.listen = false;
    expect(await get('/readyz')).toMatchObject({ status: 503, body: JSON.stringify({ ok: false, checks: state }) });
    expect((await get('/metrics')).body).toContain('ingest_ready{check="database"} 0');
    const before = asked;
    expect(await get('/healthz')).toEqual({ status: 200, retryAfter: null, body: '{"ok":true}' });
    expect(asked).toBe(before);
    state.database = true;
    state.listen = true;
    expect((await get('/readyz')).status).toBe(200);
  });

  it('/readyz is 503 in time when the checks hang or throw', async () => {
    let hang = true;
    const get = await start(() => (hang ? new Promise(() => {}) : Promise.reject(new Error('boom'))), { readyTimeoutMs: 100 });
    expect(await get('/readyz')).toMatchObject({ status: 503, body: '{"ok":false,"checks":{"answered_in_time":false}}' });
    hang = false;
    expect(await get('/readyz')).toMatchObject({ status: 503, body: '{"ok":false,"checks":{"ready":false}}' });
  });

  it('serves /metrics, 404 elsewhere, 405 for other methods, and ignores a query string', async () => {
    const get = await start(async () => ({ consumer: true }));
    expect((await get('/metrics')).status).toBe(200);
    expect((await get('/healthz?x=1')).status).toBe(200);
    expect(await get('/nope')).toMatchObject({ status: 404, body: '{"ok":false,"error":"not found"}' });
    expect((await get('/healthz', 'POST')).status).toBe(405);
  });
});
