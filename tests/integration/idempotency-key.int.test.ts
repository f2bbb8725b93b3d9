import { randomUUID } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CRON_SECRET, INGEST_SECRET, post, startPipeline, waitFor, type TestPipeline } from '../support/pipeline.ts';

// The Idempotency-Key header, over two gateway instances sharing one database.
// The key's state lives in PostgreSQL (agent_runtime.request_keys), so any instance answers a retry.
let p: TestPipeline;
beforeAll(async () => {
  // A short reply timeout: a request in flight while the projector is stopped answers 202 soon.
  p = await startPipeline({ env: { REPLY_TIMEOUT_MS: '2500' } });
  await p.startGateway();
});
afterAll(async () => p?.stop());

const ING = { 'x-ingest-secret': INGEST_SECRET };
const newShop = (what: string) => `idem-${what}-${randomUUID().slice(0, 6)}.example`;
const ingest = (gateway: number, shop: string, key: string, barcode = '4900000000001', name = 'Green tea') =>
  post(`${p.url(gateway)}/api/ingest/products`, { shop, products: [{ barcode, product_name: name }] }, { ...ING, 'Idempotency-Key': key });
const logCount = async (shop: string): Promise<number> =>
  (await p.db.query<{ n: number }>('SELECT count(*)::int AS n FROM agent_read.product_update_logs WHERE shop = $1', [shop])).rows[0]!.n;

describe('Idempotency-Key header', () => {
  it('in flight on one instance: 409 with Retry-After on the other; its 202 is replayed while pending, then the final result once known, applied once', async () => {
    const shop = newShop('inflight');
    const key = `k-${randomUUID()}`;
    await p.stopProjector();
    try {
      const first = ingest(0, shop, key);
      await waitFor(
        async () => (await p.db.query('SELECT 1 FROM agent_runtime.request_keys WHERE shop = $1 AND key = $2', [shop, key])).rowCount === 1,
        10_000,
        'the key recorded',
      );
      const concurrent = await ingest(1, shop, key);
      expect(concurrent.status).toBe(409);
      expect(Number(concurrent.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(concurrent.json).toMatchObject({ ok: false });

      const accepted = await first;
      expect(accepted.status).toBe(202);
      expect(accepted.headers.get('idempotent-replayed')).toBeNull();
      const again = await ingest(1, shop, key);
      expect(again.status).toBe(202);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(again.json).toEqual(accepted.json);
    } finally {
      await p.startProjector();
    }
    const done = await waitFor(
      async () => {
        const r = await ingest(0, shop, key);
        return r.status === 200 ? r : null;
      },
      30_000,
      'the result replayed',
    );
    expect(done.headers.get('idempotent-replayed')).toBe('true');
    expect(done.json).toEqual({ ok: true, created: 1, updated: 0, unchanged: 0, errors: [], errors_count: 0 });
    expect(await logCount(shop)).toBe(1);
  });

  it('a stored answer is replayed as it was after a gateway restart; nothing is appended again', async () => {
    const shop = newShop('restart');
    const key = `k-${randomUUID()}`;
    const first = await ingest(0, shop, key);
    expect(first.status).toBe(200);
    const commands = (
      await p.db.query<{ n: number }>('SELECT count(*)::int AS n FROM agent_runtime.command_requests WHERE shop = $1', [shop])
    ).rows[0]!.n;

    const old = p.gateways.shift()!;
    await old.stop();
    await p.startGateway();
    const retried = await ingest(p.gateways.length - 1, shop, key);
    expect(retried.status).toBe(200);
    expect(retried.headers.get('idempotent-replayed')).toBe('true');
    expect(retried.json).toEqual(first.json);
    expect(
      (await p.db.query<{ n: number }>('SELECT count(*)::int AS n FROM agent_runtime.command_requests WHERE shop = $1', [shop])).rows[0]!.n,
    ).toBe(commands);
    expect(await logCount(shop)).toBe(1);
  });

  it('same key, another body: 422; another shop or credential: its own key; un-keyed requests unchanged', async () => {
    const shop = newShop('scope');
    const key = `k-${randomUUID()}`;
    expect((await ingest(0, shop, key)).status).toBe(200);
    const other = await ingest(1, shop, key, '4900000000001', 'Black tea');
    expect(other.status).toBe(422);
    expect(other.json).toMatchObject({ ok: false, error_kind: 'idempotency_key_reused' });
    // The same key in another shop, or sent with the cron secret: another scope, processed anew.
    const shop2 = newShop('scope2');
    const elsewhere = await ingest(1, shop2, key);
    expect(elsewhere.status).toBe(200);
    expect(elsewhere.headers.get('idempotent-replayed')).toBeNull();
    const cron = await post(
      `${p.url(0)}/api/products/bulk-upsert`,
      { products: [{ barcode: '4900000000001', product_name: 'Green tea' }] },
      {
        'x-cron-secret': CRON_SECRET,
        'x-shop': shop,
        'Idempotency-Key': key,
      },
    );
    expect(cron.status).toBe(200);
    expect(cron.headers.get('idempotent-replayed')).toBeNull();
    expect(await p.db.query('SELECT 1 FROM agent_runtime.request_keys WHERE key = $1', [key]).then((r) => r.rowCount)).toBe(3);
  });

  it('a gateway that crashed between recording the key and appending: after the lease, a retry appends the recorded command id, applied once', async () => {
    const shop = newShop('lease');
    const key = `k-${randomUUID()}`;
    expect((await ingest(0, shop, key)).status).toBe(200);
    // As a crash right after the recording statement leaves it: a command id and request row, no append, no answer.
    // The lease is long enough that the retry below always comes within it (it was 2 s, within reach of a
    // loaded machine), and then runs out by moving its end into the past rather than by sleeping.
    const orphan = uuidv7();
    await p.db.query(
      `WITH k AS (UPDATE agent_runtime.request_keys SET command_id = $3, answered = false, lease_until = now() + interval '60 seconds'
                  WHERE shop = $1 AND key = $2 RETURNING received_at)
       INSERT INTO agent_runtime.command_requests (command_id, shop, kind, received_at) SELECT $3, $1, 'products.upsert', received_at FROM k`,
      [shop, key, orphan],
    );
    expect((await ingest(1, shop, key)).status).toBe(409);
    await p.db.query(`UPDATE agent_runtime.request_keys SET lease_until = now() - interval '1 second' WHERE shop = $1 AND key = $2`, [
      shop,
      key,
    ]);
    const taken = await ingest(1, shop, key);
    expect(taken.status).toBe(200);
    expect(taken.headers.get('idempotent-replayed')).toBeNull();
    expect(taken.json).toMatchObject({ ok: true, unchanged: 1 });
    const results = await p.db.query('SELECT status_code FROM agent_runtime.command_results WHERE command_id = $1', [orphan]);
    expect(results.rows).toEqual([{ status_code: 200 }]);
    const replayed = await ingest(0, shop, key);
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(replayed.json).toEqual(taken.json);
  });

  it('a key older than IDEMPOTENCY_KEY_TTL is free again and pruned in the background', async () => {
    const shop = newShop('ttl');
    const key = `k-${randomUUID()}`;
    expect((await ingest(0, shop, key)).status).toBe(200);
    await p.db.query(`UPDATE agent_runtime.request_keys SET created_at = now() - interval '25 hours' WHERE shop = $1`, [shop]);
    const later = await ingest(0, shop, key, '4900000000001', 'Black tea');
    expect(later.status).toBe(200);
    expect(later.headers.get('idempotent-replayed')).toBeNull();
    await p.db.query(`UPDATE agent_runtime.request_keys SET created_at = now() - interval '25 hours' WHERE shop = $1`, [shop]);
    const deleted = await p.projector!.pruner!.runOnce();
    expect(deleted['agent_runtime.request_keys']).toBeGreaterThanOrEqual(1);
    expect((await p.db.query('SELECT 1 FROM agent_runtime.request_keys WHERE shop = $1', [shop])).rowCount).toBe(0);
  });
});
