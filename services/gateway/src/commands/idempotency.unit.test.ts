import { afterEach, describe, expect, it } from 'vitest';
import type { Pool } from '@ingest/db';
import { TEST_CRON_SECRET, TEST_INGEST_SECRET, startTestGateway, type TestGateway } from '../../testing/testGateway.ts';

// The Idempotency-Key header at the HTTP edge, against an in-memory
// agent_runtime.request_keys (the real statements run in tests/integration/idempotency-key).
interface KeyRow {
  fingerprint: string;
  command_id: string;
  received_at: string;
  lease_until: number;
  answered: boolean;
}

function keyStore() {
  const rows = new Map<string, KeyRow>();
  const results = new Map<string, { status_code: number; body: Record<string, unknown>; shop: string }>();
  const sql: string[] = [];
  const id = (p: unknown[]) => `${String(p[0])}|${String(p[1])}|${String(p[2])}`;
  const pool = {
    query: async (text: string, p: unknown[] = []) => {
      sql.push(text);
      const none = { rows: [], rowCount: 0 };
      if (text.includes('INSERT INTO agent_runtime.request_keys')) {
        if (rows.has(id(p))) return none;
        rows.set(id(p), {
          fingerprint: String(p[3]),
          command_id: String(p[4]),
          received_at: String(p[5]),
          lease_until: Date.now() + Number(p[6]),
          answered: false,
        });
        return { rows: [{ command_id: p[4] }], rowCount: 1 };
      }
      if (text.startsWith('SELECT') && text.includes('FROM agent_runtime.request_keys')) {
        const r = rows.get(id(p));
        if (!r) return none;
        const row = {
          ...r,
          received_ms: Date.parse(r.received_at),
          lapsed: r.lease_until <= Date.now(),
          wait_s: Math.max(1, Math.ceil((r.lease_until - Date.now()) / 1000)),
        };
        return { rows: [row], rowCount: 1 };
      }
      if (text.includes('UPDATE agent_runtime.request_keys SET lease_until')) {
        const r = rows.get(id(p));
        if (!r || r.command_id !== p[3] || r.answered || r.lease_until > Date.now()) return none;
        r.lease_until = Date.now() + Number(p[4]);
        return { rows: [], rowCount: 1 };
      }
      if (text.includes('SET answered = true')) {
        const r = rows.get(id(p));
        if (r && r.command_id === p[3]) r.answered = true;
        return none;
      }
      if (text.includes('DELETE FROM agent_runtime.request_keys')) {
        if (rows.get(id(p))?.command_id === p[3]) rows.delete(id(p));
        return none;
      }
      if (text.includes('FROM agent_runtime.command_results WHERE command_id = ANY')) {
        const found = (p[0] as string[]).flatMap((c) => {
          const r = results.get(c);
          return r ? [{ command_id: c, ...r, parked: false }] : [];
        });
        return { rows: found, rowCount: found.length };
      }
      return none;
    },
  } as unknown as Pool;
  return { pool, rows, results, sql };
}

let gw: TestGateway;
afterEach(() => gw.close());

const body = (name = 'x', shop = 'a.example') => ({ shop, products: [{ barcode: '1', product_name: name }] });
function send(b: unknown, headers: Record<string, string>, path = '/api/ingest/products') {
  return fetch(`${gw.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-ingest-secret': TEST_INGEST_SECRET, ...headers },
    body: typeof b === 'string' ? b : JSON.stringify(b),
  });
}

describe('Idempotency-Key header', () => {
  it('a malformed key is 400 and nothing is appended or recorded: empty, over 255 characters, not printable ASCII', async () => {
    const s = keyStore();
    gw = await startTestGateway({}, { pool: s.pool });
    for (const key of ['', '""', 'k'.repeat(256), 'caf\u00e9', 'a\tb']) {
      const r = await send(body(), { 'Idempotency-Key': key });
      expect(r.status, JSON.stringify(key)).toBe(400);
      expect(await r.json()).toMatchObject({ ok: false, error: expect.stringContaining('Idempotency-Key') });
    }
    expect(gw.appended).toEqual([]);
    expect(s.sql).toEqual([]);
    // 255 printable characters, and the draft's quoted form, are keys.
    expect((await send(body(), { 'Idempotency-Key': 'k'.repeat(255) })).status).toBe(202);
    expect((await send(body(), { 'Idempotency-Key': '"quoted key"' })).status).toBe(202);
  });

  it('a 202 is stored: a retry answers it again with Idempotent-Replayed, then the final result once known; nothing appended again', async () => {
    const s = keyStore();
    gw = await startTestGateway({}, { pool: s.pool });
    const first = await send(body(), { 'Idempotency-Key': 'k1' });
    expect(first.status).toBe(202);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const accepted = (await first.json()) as { command_id: string };

    // Another serialisation of the same document (key order, spacing) is the same request.
    const again = await send(`{ "products": [{"product_name":"x","barcode":"1"}], "shop": "a.example" }`, { 'Idempotency-Key': 'k1' });
    expect(again.status).toBe(202);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await again.json()).toEqual(accepted);

    s.results.set(accepted.command_id, { status_code: 200, body: { ok: true, created: 1 }, shop: 'a.example' });
    const done = await send(body(), { 'Idempotency-Key': 'k1' });
    expect(done.status).toBe(200);
    expect(done.headers.get('idempotent-replayed')).toBe('true');
    expect(await done.json()).toEqual({ ok: true, created: 1 });
    expect(gw.appended.map((c) => c.command_id)).toEqual([accepted.command_id]);
  });

  it('same key, another request (body, path): 422 in the error shape, nothing appended', async () => {
    const s = keyStore();
    gw = await startTestGateway({}, { pool: s.pool });
    expect((await send(body(), { 'Idempotency-Key': 'k2' })).status).toBe(202);
    const other = await send(body('y'), { 'Idempotency-Key': 'k2' });
    expect(other.status).toBe(422);
    expect(await other.json()).toEqual({
      ok: false,
      error_kind: 'idempotency_key_reused',
      error: 'Idempotency-Key was already used for a different request',
    });
    // The path with its query is part of the request.
    expect((await send(body(), { 'Idempotency-Key': 'k2' }, '/api/ingest/products?dry_run=false')).status).toBe(422);
    expect(gw.appended).toHaveLength(1);
  });

  it('a dry run with a key stores nothing: the key stays free for the real request', async () => {
    const s = keyStore();
    gw = await startTestGateway({}, { pool: s.pool });
    expect((await send(body(), { 'Idempotency-Key': 'k-dry' }, '/api/ingest/products?dry_run=true')).status).toBe(200);
    expect([gw.appended, gw.dryRuns.length]).toEqual([[], 1]);
    expect((await send(body(), { 'Idempotency-Key': 'k-dry' })).status).toBe(202);
    expect(gw.appended).toHaveLength(1);
  });

  it('keys are scoped per credential and shop', async () => {
    const s = keyStore();
    gw = await startTestGateway({}, { pool: s.pool });
    expect((await send(body(), { 'Idempotency-Key': 'k3' })).status).toBe(202);
    expect((await send(body('x', 'b.example'), { 'Idempotency-Key': 'k3' })).headers.get('idempotent-replayed')).toBeNull();
    const cron = await fetch(`${gw.url}/api/products/bulk-upsert`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-cron-secret': TEST_CRON_SECRET, 'x-shop': 'a.example', 'Idempotency-Key': 'k3' },
      body: JSON.stringify({ products: [{ barcode: '1', product_name: 'x' }] }),
    });
    expect(cron.status).toBe(202);
    expect(cron.headers.get('idempotent-replayed')).toBeNull();
    expect(gw.appended).toHaveLength(3);
    // Only a hash of the secret is kept.
    expect([...s.rows.keys()].every((k) => /^(ingest|cron):[0-9a-f]{64}\|/.test(k))).toBe(true);
  });

  it('still in flight (its lease running, no answer yet): 409 with Retry-After; after the lease the same command id is sent again', async () => {
    const s = keyStore();
    gw = await startTestGateway({}, { pool: s.pool });
    expect((await send(body(), { 'Idempotency-Key': 'k4' })).status).toBe(202);
    const [scope, row] = [...s.rows.entries()][0]!;
    // As if another gateway were still waiting for its reply.
    s.rows.set(scope, { ...row, answered: false, lease_until: Date.now() + 20_000 });
    const busy = await send(body(), { 'Idempotency-Key': 'k4' });
    expect(busy.status).toBe(409);
    // No longer than the reply timeout (10 ms here): the first request has its answer by then.
    expect(busy.headers.get('retry-after')).toBe('1');
    expect(await busy.json()).toMatchObject({ ok: false });
    expect(gw.appended).toHaveLength(1);

    // That gateway crashed: after its lease, a retry appends the same command (the projector's claim, D4, applies it once).
    s.rows.set(scope, { ...row, answered: false, lease_until: Date.now() - 1 });
    const taken = await send(body(), { 'Idempotency-Key': 'k4' });
    expect(taken.status).toBe(202);
    expect(gw.appended.map((c) => c.command_id)).toEqual([row.command_id, row.command_id]);
    expect(gw.appended[1]!.received_at).toBe(gw.appended[0]!.received_at);
  });

  it('a result that says the command was never appended (503) frees the key: the retry is processed anew', async () => {
    const s = keyStore();
    gw = await startTestGateway({}, { pool: s.pool });
    const first = (await (await send(body(), { 'Idempotency-Key': 'k5' })).json()) as { command_id: string };
    s.results.set(first.command_id, { status_code: 503, body: { ok: false, error: 'command log unavailable' }, shop: 'a.example' });
    const retry = await send(body(), { 'Idempotency-Key': 'k5' });
    expect(retry.status).toBe(202);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
    expect(gw.appended).toHaveLength(2);
    expect(gw.appended[1]!.command_id).not.toBe(first.command_id);
  });

  it('without the header nothing changes: no key statement runs', async () => {
    const s = keyStore();
    gw = await startTestGateway({}, { pool: s.pool });
    expect((await send(body(), {})).status).toBe(202);
    expect((await send(body(), {})).status).toBe(202);
    expect(gw.appended).toHaveLength(2);
    expect(s.sql.some((q) => q.includes('request_keys'))).toBe(false);
  });

  it('a key whose append the log refused is released: the retry is processed anew', async () => {
    const s = keyStore();
    let fail = true;
    const appended: string[] = [];
    gw = await startTestGateway(
      {},
      {
        pool: s.pool,
        commandLog: {
          appendCommand: async (c) => {
            if (fail) throw Object.assign(new Error('broker down'), { name: 'KafkaJSConnectionError' });
            appended.push(c.command_id);
          },
        },
      },
    );
    const r = await send(body(), { 'Idempotency-Key': 'k6' });
    expect(r.status).toBe(503);
    expect(s.rows.size).toBe(0);
    fail = false;
    expect((await send(body(), { 'Idempotency-Key': 'k6' })).status).toBe(202);
    expect(appended).toHaveLength(1);
  });
});
