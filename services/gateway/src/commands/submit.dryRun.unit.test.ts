import { afterEach, describe, expect, it } from 'vitest';
import type { Pool } from '@ingest/db';
import { COMMAND_VERSION } from '@ingest/domain';
import type { DryRunner } from './submit.ts';
import { TEST_AS_OF, TEST_CRON_SECRET, TEST_INGEST_SECRET, startTestGateway, type TestGateway } from '../../testing/testGateway.ts';

// Dry runs at the HTTP edge (D22): `?dry_run=true` on every write endpoint (and the order
// lines' body flag) sends the command the real request would append to the dry runner instead; its
// answer is the projection's reply plus `dry_run: true` and `as_of`. Nothing is recorded or appended.

const ING = { 'x-ingest-secret': TEST_INGEST_SECRET };
const LOC = '0190f5e2-8c1a-7b3c-9d4e-5f6a7b8c9d0e';
const ENDPOINTS: Array<{ path: string; kind: string; body: Record<string, unknown>; headers?: Record<string, string> }> = [
  {
    path: '/api/products/bulk-upsert',
    kind: 'products.upsert',
    body: { products: [{ barcode: '1', product_name: 'x' }] },
    headers: { 'x-cron-secret': TEST_CRON_SECRET, 'x-shop': 'a.example' },
  },
  { path: '/api/ingest/products', kind: 'products.upsert', body: { shop: 'a.example', products: [{ barcode: '1', product_name: 'x' }] } },
  {
    path: '/api/ingest/inventory-snapshot',
    kind: 'inventory.snapshot',
    body: { shop: 'a.example', source_system: 'pos', location_id: LOC, lines: [{ barcode: '1', on_hand_qty: 1 }] },
  },
  {
    path: '/api/ingest/inventory-available',
    kind: 'inventory.available',
    body: { shop: 'a.example', source_system: 'pos', mode: 'delta', location_id: LOC, lines: [{ barcode: '1', available_delta: -1 }] },
  },
  {
    path: '/api/inventory-levels/bulk-upsert',
    kind: 'inventory.levels',
    body: { shop: 'a.example', source_system: 'wms', mode: 'absolute', lines: [{ barcode: '1', location_id: LOC, on_hand_qty: 1 }] },
  },
  { path: '/api/order-line-master/bulk-upsert', kind: 'order_lines.upsert', body: { shop: 'a.example', rows: [{}] } },
  {
    path: '/api/admin/locations',
    kind: 'locations.register',
    body: { shop: 'a.example', locations: [{ location_id: LOC, name: 'Main' }] },
  },
  { path: '/api/admin/channels', kind: 'channels.register', body: { shop: 'a.example', channels: [{ name: 'Web' }] } },
  { path: '/api/admin/daily-snapshot', kind: 'inventory.daily_snapshot', body: { shop: 'a.example', snapshot_date: '2026-11-20' } },
];

const recordingPool = () => {
  const statements: string[] = [];
  const pool = { query: async (sql: string) => (statements.push(sql), { rows: [], rowCount: 1 }) } as unknown as Pool;
  return { pool, statements };
};

let gw: TestGateway;
afterEach(() => gw.close());

const send = (path: string, body: unknown, headers: Record<string, string> = ING) =>
  fetch(`${gw.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

describe('dry run (D22)', () => {
  it.each(ENDPOINTS)(
    '$path?dry_run=true: the command of the real request goes to the dry runner, nothing is recorded or appended',
    async (e) => {
      const { pool, statements } = recordingPool();
      gw = await startTestGateway({}, { pool });
      const r = await send(`${e.path}?dry_run=true`, e.body, e.headers);
      expect(r.status).toBe(200);
      expect(await r.json()).toEqual({ ok: true, projected: true, dry_run: true, as_of: TEST_AS_OF });
      expect(gw.appended).toEqual([]);
      expect(statements).toEqual([]);
      expect(gw.dryRuns.map((c) => [c.kind, c['shop']])).toEqual([[e.kind, 'a.example']]);

      // The real request builds the same command: only its id and time differ.
      const real = await send(`${e.path}?dry_run=false`, e.body, e.headers);
      expect(real.status).toBe(202);
      const strip = (c: Record<string, unknown>) => {
        const { command_id: _id, received_at: _at, ...rest } = c;
        // The registry's omitted ids and the defaulted inventory_as_of are chosen per request (D3).
        return JSON.parse(JSON.stringify(rest).replace(/"(channel_id|inventory_as_of)":"[^"]*"/g, '"$1":"*"')) as unknown;
      };
      expect(gw.appended.map(strip)).toEqual(gw.dryRuns.map(strip));
      // Both in the schema version the gateway writes (docs/replay.md#command-versions).
      expect([...gw.appended, ...gw.dryRuns].map((c) => c['v'])).toEqual([COMMAND_VERSION, COMMAND_VERSION]);
    },
  );

  it('order lines: the body flag of the spec is a dry run too, its command is the real one (dry_run false) and the answer echoes dry_run: true', async () => {
    const runner: DryRunner = {
      run: async (message) => {
        const c = JSON.parse(message) as { payload: { dry_run: boolean } };
        expect(c.payload.dry_run).toBe(false);
        return {
          outcome: 'projected',
          reply: { status: 200, body: { ok: true, dry_run: false, accepted_rows: 1 } },
          events: [],
          as_of: TEST_AS_OF,
        };
      },
    };
    gw = await startTestGateway({}, { dryRunner: runner });
    for (const [query, body] of [
      ['', { dry_run: true }],
      ['?dry_run=true', {}],
      ['?dry_run=true', { dry_run: false }],
    ] as const) {
      const r = await send(`/api/order-line-master/bulk-upsert${query}`, { shop: 'a.example', rows: [{}], ...body });
      // Key order as the real answer's: dry_run stays second.
      expect(await r.text()).toBe(`{"ok":true,"dry_run":true,"accepted_rows":1,"as_of":"${TEST_AS_OF}"}`);
    }
    expect(gw.appended).toEqual([]);
  });

  it.each(['yes', '1', 'TRUE', ''])('?dry_run=%s is 400 and nothing is run', async (value) => {
    gw = await startTestGateway();
    const r = await send(`/api/ingest/products?dry_run=${value}`, { shop: 'a.example', products: [] });
    expect([r.status, await r.json()]).toEqual([400, { ok: false, error: 'dry_run must be true or false' }]);
    expect([gw.appended, gw.dryRuns]).toEqual([[], []]);
  });

  it('a repeated ?dry_run is 400', async () => {
    gw = await startTestGateway();
    const r = await send('/api/ingest/products?dry_run=true&dry_run=true', { shop: 'a.example', products: [] });
    expect(r.status).toBe(400);
    expect(gw.dryRuns).toEqual([]);
  });

  it('full validation first: a bad body or bad credentials answer as for the real request, and nothing is run', async () => {
    gw = await startTestGateway();
    const bad = await send('/api/ingest/inventory-snapshot?dry_run=true', {
      shop: 'a.example',
      source_system: 'pos',
      location_id: LOC,
      lines: [{ barcode: '1', on_hand_qty: -1 }],
    });
    expect(bad.status).toBe(422);
    expect(((await bad.json()) as { error_kind: string }).error_kind).toBe('invalid_payload');
    const unauth = await send('/api/ingest/products?dry_run=true', { shop: 'a.example', products: [] }, { 'x-ingest-secret': 'wrong' });
    expect(unauth.status).toBe(401);
    expect(gw.dryRuns).toEqual([]);
  });

  it('a malformed Idempotency-Key is refused as for the real request, on every write endpoint, and nothing is run', async () => {
    gw = await startTestGateway();
    for (const e of ENDPOINTS) {
      for (const key of ['', 'k'.repeat(256), 'caf\u00e9']) {
        const headers = { ...(e.headers ?? ING), 'idempotency-key': key };
        const [dry, real] = [await send(`${e.path}?dry_run=true`, e.body, headers), await send(e.path, e.body, headers)];
        expect({ path: e.path, key: key.slice(0, 8), status: dry.status }).toEqual({ path: e.path, key: key.slice(0, 8), status: 400 });
        expect(await dry.json()).toEqual(await real.json());
      }
    }
    expect(gw.dryRuns).toEqual([]);
    expect(gw.appended).toEqual([]);
  });

  it('a refusal of the projection (422 location_unresolved) is answered with its status, plus dry_run and as_of', async () => {
    const body = { ok: false, error_kind: 'location_unresolved', error: 'no location' };
    gw = await startTestGateway(
      {},
      { dryRunner: { run: async () => ({ outcome: 'projected', reply: { status: 422, body }, events: [], as_of: TEST_AS_OF }) } },
    );
    const r = await send('/api/ingest/inventory-snapshot?dry_run=true', {
      shop: 'a.example',
      source_system: 'pos',
      location_id: LOC,
      lines: [{ barcode: '1', on_hand_qty: 1 }],
    });
    expect([r.status, await r.json()]).toEqual([422, { ...body, dry_run: true, as_of: TEST_AS_OF }]);
  });

  it('a command the live projector would park is answered 202 parked, as the real caller would be told', async () => {
    const behind = '0190f5e2-0000-7000-8000-000000000001';
    gw = await startTestGateway(
      {},
      {
        dryRunner: {
          run: async () => ({
            outcome: 'parked',
            error: `waiting behind parked command ${behind}`,
            waiting_behind: behind,
            as_of: TEST_AS_OF,
          }),
        },
      },
    );
    const r = await send('/api/ingest/products?dry_run=true', { shop: 'a.example', products: [{ barcode: '1', product_name: 'x' }] });
    expect([r.status, await r.json()]).toEqual([
      202,
      {
        ok: true,
        status: 'parked',
        dry_run: true,
        as_of: TEST_AS_OF,
        error: `waiting behind parked command ${behind}`,
        waiting_behind: behind,
      },
    ]);
  });

  it('PostgreSQL down during a dry run: 503 with Retry-After; a statement timeout too', async () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    gw = await startTestGateway({}, { dryRunner: { run: () => Promise.reject(refused) } });
    const r = await send('/api/ingest/products?dry_run=true', { shop: 'a.example', products: [{ barcode: '1', product_name: 'x' }] });
    expect([r.status, r.headers.get('retry-after'), await r.json()]).toEqual([
      503,
      '5',
      { ok: false, error: 'database unavailable; retry later' },
    ]);
    await gw.close();

    const timedOut = Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' });
    gw = await startTestGateway({}, { dryRunner: { run: () => Promise.reject(timedOut) } });
    const t = await send('/api/ingest/products?dry_run=true', { shop: 'a.example', products: [{ barcode: '1', product_name: 'x' }] });
    expect([t.status, t.headers.get('retry-after'), await t.json()]).toEqual([
      503,
      '5',
      { ok: false, error: 'dry run timed out; retry later' },
    ]);
  });

  it('Prefer: respond-async does not apply: a dry run always answers at once', async () => {
    gw = await startTestGateway();
    const r = await fetch(`${gw.url}/api/ingest/products?dry_run=true`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...ING, prefer: 'respond-async' },
      body: JSON.stringify({ shop: 'a.example', products: [{ barcode: '1', product_name: 'x' }] }),
    });
    expect(r.status).toBe(200);
    expect(r.headers.get('preference-applied')).toBeNull();
  });
});
