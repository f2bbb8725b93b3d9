import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '@ingest/runtime';
import { startTracingInMemory } from '@ingest/runtime/testing';
import { fetchAnswer, INGEST_SECRET, post, startPipeline, waitFor, type TestPipeline } from '../support/pipeline.ts';

// D28 on the real pipeline: keys minted through the API into agent_runtime.api_keys, writes and
// reads with them through two gateways, revocation heard by both within a second (the trigger's
// notification on each gateway's LISTEN connection), and the key never in a log line, a span or
// the metrics. Every endpoint × credential case is in the HTTP tier (keyAccess.unit.test.ts).
const PEPPER = 'integration-pepper-0123456789abcdef0123456789';
let p: TestPipeline;
let tracing: Awaited<ReturnType<typeof startTracingInMemory>>;
let logText = '';

beforeAll(async () => {
  tracing = await startTracingInMemory();
  const destination = new Writable({
    write(chunk: Buffer, _e, done) {
      logText += chunk.toString();
      done();
    },
  });
  p = await startPipeline({ env: { API_KEY_PEPPER: PEPPER }, log: createLogger({ name: 'ingest', level: 'debug', destination }) });
  await p.startGateway();
});
afterAll(async () => {
  await p?.stop();
  await tracing?.shutdown();
});

const ING = { 'x-ingest-secret': INGEST_SECRET };
const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
const newShop = () => `keys-${randomUUID().slice(0, 8)}.example`;
const LOCATION = '0194f3a2-0000-7000-8000-00000000aa01';
const snapshot = (shop: string, qty: number) => ({
  shop,
  source_system: 'pos',
  location_id: LOCATION,
  lines: [{ barcode: '4901234567894', on_hand_qty: qty, available_qty: qty }],
});

async function mint(shop: string, scopes: string[], gateway = 0): Promise<{ key_id: string; key: string }> {
  const r = await post(`${p.url(gateway)}/api/admin/keys`, { shop, scopes, note: 'integration' }, ING);
  expect(r.status, r.text).toBe(201);
  expect(r.headers.get('cache-control')).toBe('no-store');
  return r.json as { key_id: string; key: string };
}

describe('per-shop API keys on the real pipeline (D28)', () => {
  it('stores only the keyed hash, and a key writes its own shop through any gateway', async () => {
    const shop = newShop();
    const { key_id, key } = await mint(shop, ['inventory:write', 'commands:read']);
    const stored = await p.db.query<{ key_hash: Buffer; row: string }>(
      'SELECT key_hash, to_jsonb(k)::text AS row FROM agent_runtime.api_keys k WHERE key_id = $1',
      [key_id],
    );
    expect(stored.rows[0]!.key_hash.length).toBe(32);
    expect(stored.rows[0]!.row).not.toContain(key.slice(4));

    await post(`${p.url(0)}/api/admin/locations`, { shop, locations: [{ location_id: LOCATION, name: 'Store' }] }, ING);
    await post(`${p.url(0)}/api/ingest/products`, { shop, products: [{ barcode: '4901234567894', product_name: 'Tea' }] }, ING);
    const written = await post(`${p.url(1)}/api/ingest/inventory-snapshot`, snapshot(shop, 5), { ...bearer(key), prefer: 'respond-async' });
    expect(written.status, written.text).toBe(202);
    const commandId = (written.json as { command_id: string }).command_id;
    const applied = await waitFor(async () => {
      const r = await fetchAnswer(`${p.url(0)}/api/commands/${commandId}`, { headers: bearer(key) });
      return r.status === 200 ? r : null;
    });
    expect(applied.json).toMatchObject({ ok: true });
    // Who wrote what (D28): the update log and its agent_read view name the key.
    const logged = await p.db.query<{ actor: string }>('SELECT actor FROM agent_read.inventory_update_logs WHERE shop = $1', [shop]);
    expect(logged.rows.map((r) => r.actor)).toEqual([key_id]);

    const other = await post(`${p.url(1)}/api/ingest/inventory-snapshot`, snapshot(newShop(), 5), bearer(key));
    expect(other.status).toBe(403);
    expect(other.json).toEqual({ ok: false, error: 'forbidden for this shop' });

    // The platform's command of another shop is not revealed to the key.
    const foreign = await post(`${p.url(0)}/api/ingest/products`, { shop: newShop(), products: [] }, { ...ING, prefer: 'respond-async' });
    const foreignId = (foreign.json as { command_id: string }).command_id;
    expect((await fetchAnswer(`${p.url(1)}/api/commands/${foreignId}`, { headers: bearer(key) })).status).toBe(404);

    const listed = await fetchAnswer(`${p.url(0)}/api/admin/keys?shop=${shop}`, { headers: ING });
    expect(listed.status).toBe(200);
    expect(JSON.stringify(listed.json)).not.toContain(key);
    // last_used_at is written in batches, a few seconds behind.
    await waitFor(
      async () => {
        const l = await fetchAnswer(`${p.url(0)}/api/admin/keys?shop=${shop}`, { headers: ING });
        return (l.json as { keys: Array<{ last_used_at: string | null }> }).keys[0]?.last_used_at;
      },
      15_000,
      'last_used_at',
    );
  });

  it('revocation reaches every gateway within a second, warm caches included', async () => {
    const shop = newShop();
    const { key_id, key } = await mint(shop, ['commands:read']);
    const probe = (g: number) => fetchAnswer(`${p.url(g)}/api/commands/${randomUUID()}`, { headers: bearer(key) });
    // Warm both caches: the key is now answered without PostgreSQL.
    expect((await probe(0)).status).toBe(404);
    expect((await probe(1)).status).toBe(404);

    const revoked = await fetchAnswer(`${p.url(0)}/api/admin/keys/${key_id}`, { method: 'DELETE', headers: ING });
    expect(revoked.status).toBe(200);
    const at = performance.now();
    const delays = await Promise.all(
      [0, 1].map(async (g) => {
        await waitFor(async () => (await probe(g)).status === 401, 5000, `gateway ${g} refuses the revoked key`);
        return performance.now() - at;
      }),
    );
    console.log(`revocation delay across two gateways: ${delays.map((d) => `${d.toFixed(1)} ms`).join(', ')}`);
    for (const d of delays) expect(d).toBeLessThan(1000);
    const r = await probe(1);
    expect(r.text).toBe('unauthorized');
    expect(r.headers.get('www-authenticate')).toBe('Bearer');
  });

  it('an expired key is refused at once, without a notification', async () => {
    const shop = newShop();
    const { key_id, key } = await mint(shop, ['commands:read']);
    expect((await fetchAnswer(`${p.url(0)}/api/commands/${randomUUID()}`, { headers: bearer(key) })).status).toBe(404);
    // last_used_at alone announces nothing; expires_at does, but the gateway also checks the cached row itself.
    await p.db.query("UPDATE agent_runtime.api_keys SET expires_at = now() - interval '1 second' WHERE key_id = $1", [key_id]);
    await waitFor(async () => (await fetchAnswer(`${p.url(0)}/api/commands/${randomUUID()}`, { headers: bearer(key) })).status === 401);
  });

  it('never writes a key into a log line, a span or the metrics', async () => {
    const shop = newShop();
    const { key, key_id } = await mint(shop, ['products:write']);
    await post(`${p.url(0)}/api/ingest/products`, { shop, products: [{ barcode: '4901234567894', product_name: 'Tea' }] }, bearer(key));
    await post(`${p.url(0)}/api/ingest/products`, { shop: newShop(), products: [] }, bearer(key));
    await post(`${p.url(0)}/api/ingest/products`, { shop, products: [] }, bearer(`${key.slice(0, -1)}x`));
    const metrics = await fetchAnswer(`${p.url(0)}/metrics`);
    const secret = key.slice(4);
    // The request's log line names the key by its id (D28).
    const lines = logText
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.find((l) => l['msg'] === 'request' && l['shop'] === shop && l['status'] === 200)).toMatchObject({
      actor: key_id,
      shop,
    });
    expect(logText.length).toBeGreaterThan(0);
    expect(logText).not.toContain(secret);
    expect(metrics.text).not.toContain(secret);
    expect(JSON.stringify(tracing.spans())).not.toContain(secret);
  });
});
