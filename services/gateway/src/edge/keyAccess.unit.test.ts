import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKeyService, type Scope } from '@ingest/access';
import { memoryKeyRows } from '@ingest/access/testing';
import type { Pool } from '@ingest/db';
import {
  fetchAnswer,
  startTestGateway,
  TEST_CRON_SECRET,
  TEST_INGEST_SECRET,
  TEST_PEPPER,
  type HttpAnswer,
  type TestGateway,
} from '@ingest/gateway/testing';

// D28, every endpoint × every kind of credential: the status, the body, the headers, and that a
// refused request appended nothing to the command log. The keys live in memory here (the same key
// service as the gateway's, over a Map); tests/integration/apiKeys.int.test.ts runs them over the
// real table, with revocation across two gateways.

const SHOP = 'own.myshop.example';
const OTHER = 'other.myshop.example';
const LOCATION = '0194f3a2-0000-7000-8000-00000000aa01';
const BARCODE = '4901234567894';
/** A command of SHOP and one of OTHER that GET /api/commands/{id} finds pending. */
const OWN_COMMAND = '0194f3a2-5c1e-7d4b-9a6f-2b8c4d6e8f01';
const OTHER_COMMAND = '0194f3a2-5c1e-7d4b-9a6f-2b8c4d6e8f02';

const ORDER_ROW = {
  source_system: 'pos',
  transaction_id: 'T-1001',
  transaction_line_id: '1',
  line_instance_no: 1,
  barcode: BARCODE,
  ordered_at: '2026-11-22T10:15:00+09:00',
  currency: 'JPY',
  gross_amount_taxincl: 1100,
  net_amount_taxincl: 1100,
};

interface Endpoint {
  method: 'POST' | 'GET' | 'DELETE';
  path: string;
  /** The scope a key needs; null: the platform credential only. */
  scope: Scope | null;
  /** A valid body for a shop (undefined: no body). */
  body?: (shop: string) => unknown;
  /** Where the shop is named: the body, the x-shop header (bulk upsert), the command looked up, `?shop=`, or the parked command acted on. */
  shopIn: 'body' | 'x-shop' | 'command' | 'query' | 'parked' | 'none';
  /** The platform's shared-secret headers for it. */
  platform: Record<string, string>;
}

const ingest = { 'x-ingest-secret': TEST_INGEST_SECRET };
const ENDPOINTS: Endpoint[] = [
  {
    method: 'POST',
    path: '/api/products/bulk-upsert',
    scope: 'products:write',
    body: () => ({ products: [{ barcode: BARCODE, product_name: 'Tea' }] }),
    shopIn: 'x-shop',
    platform: { 'x-cron-secret': TEST_CRON_SECRET, 'x-shop': SHOP },
  },
  {
    method: 'POST',
    path: '/api/ingest/products',
    scope: 'products:write',
    body: (shop) => ({ shop, products: [{ barcode: BARCODE, product_name: 'Tea' }] }),
    shopIn: 'body',
    platform: ingest,
  },
  {
    method: 'POST',
    path: '/api/inventory-levels/bulk-upsert',
    scope: 'inventory:write',
    body: (shop) => ({
      shop,
      source_system: 'wms',
      mode: 'delta',
      lines: [{ barcode: BARCODE, location_id: LOCATION, available_delta: -2 }],
    }),
    shopIn: 'body',
    platform: ingest,
  },
  {
    method: 'POST',
    path: '/api/ingest/inventory-snapshot',
    scope: 'inventory:write',
    body: (shop) => ({ shop, source_system: 'pos', location_id: LOCATION, lines: [{ barcode: BARCODE, on_hand_qty: 3 }] }),
    shopIn: 'body',
    platform: ingest,
  },
  {
    method: 'POST',
    path: '/api/ingest/inventory-available',
    scope: 'inventory:write',
    body: (shop) => ({
      shop,
      source_system: 'ec',
      mode: 'absolute',
      location_id: LOCATION,
      lines: [{ barcode: BARCODE, available_qty: 7 }],
    }),
    shopIn: 'body',
    platform: ingest,
  },
  {
    method: 'POST',
    path: '/api/order-line-master/bulk-upsert',
    scope: 'orders:write',
    body: (shop) => ({ shop, rows: [ORDER_ROW] }),
    shopIn: 'body',
    platform: ingest,
  },
  {
    method: 'POST',
    path: '/api/admin/locations',
    scope: 'registry:write',
    body: (shop) => ({ shop, locations: [{ name: 'Store' }] }),
    shopIn: 'body',
    platform: ingest,
  },
  {
    method: 'POST',
    path: '/api/admin/channels',
    scope: 'registry:write',
    body: (shop) => ({ shop, channels: [{ name: 'Online' }] }),
    shopIn: 'body',
    platform: ingest,
  },
  { method: 'GET', path: `/api/commands/${OWN_COMMAND}`, scope: 'commands:read', shopIn: 'command', platform: ingest },
  {
    method: 'POST',
    path: '/api/admin/daily-snapshot',
    scope: null,
    body: (shop) => ({ shop, snapshot_date: '2026-11-22' }),
    shopIn: 'body',
    platform: ingest,
  },
  {
    method: 'POST',
    path: '/api/admin/keys',
    scope: null,
    body: (shop) => ({ shop, scopes: ['inventory:write'] }),
    shopIn: 'none',
    platform: ingest,
  },
  { method: 'GET', path: '/api/admin/keys', scope: null, shopIn: 'none', platform: ingest },
  { method: 'DELETE', path: '/api/admin/keys/key_00000000000000ff', scope: null, shopIn: 'none', platform: ingest },
  // The operator API: the platform for every shop, a key with `admin` for its own.
  { method: 'GET', path: '/api/admin/commands?status=parked', scope: 'admin', shopIn: 'query', platform: ingest },
  {
    method: 'POST',
    path: `/api/admin/parked/${OWN_COMMAND}/skip`,
    scope: 'admin',
    body: () => ({ reason: 'matrix' }),
    shopIn: 'parked',
    platform: ingest,
  },
  { method: 'POST', path: `/api/admin/parked/${OWN_COMMAND}/retry`, scope: 'admin', body: () => ({}), shopIn: 'parked', platform: ingest },
];

/** PostgreSQL as GET /api/commands/{id} reads it: two pending commands, one per shop, and nothing else. */
const pool = {
  query: async (sql: string, params: unknown[] = []) => {
    const shop = params[0] === OWN_COMMAND ? SHOP : params[0] === OTHER_COMMAND ? OTHER : null;
    if (sql.includes('FROM agent_runtime.command_requests') && shop) return { rows: [{ shop, received_at: new Date() }], rowCount: 1 };
    if (sql.startsWith('SELECT shop FROM agent_runtime.parked_commands') && shop) return { rows: [{ shop }], rowCount: 1 };
    return { rows: [], rowCount: 0 };
  },
} as unknown as Pool;

const rows = memoryKeyRows();
const keys = createKeyService({ rows, pepper: TEST_PEPPER });
let g: TestGateway;
/** Keys of SHOP: one with every scope, and the others as their case needs. */
const k: Record<string, string> = {};

beforeAll(async () => {
  g = await startTestGateway({}, { pool, keys });
  const all: Scope[] = ['products:write', 'inventory:write', 'orders:write', 'registry:write', 'commands:read', 'admin'];
  const own = await keys.create({ shop: SHOP, scopes: all });
  k['own'] = own.key;
  k['ownId'] = own.key_id;
  k['other'] = (await keys.create({ shop: OTHER, scopes: all })).key;
  k['expired'] = (await keys.create({ shop: SHOP, scopes: all, expires_in_days: 1 })).key;
  const expired = [...rows.rows.values()].find((r) => r.expires_at !== null)!;
  expired.expires_at = new Date(Date.now() - 1000);
  const revoked = await keys.create({ shop: SHOP, scopes: all });
  k['revoked'] = revoked.key;
  // Used once before it is revoked, so a cached answer is what the revocation must beat.
  expect((await fetchAnswer(`${g.url}/api/commands/${OWN_COMMAND}`, { headers: bearer(revoked.key) })).status).toBe(202);
  expect((await fetchAnswer(`${g.url}/api/admin/keys/${revoked.key_id}`, { method: 'DELETE', headers: ingest })).status).toBe(200);
  // A key with every scope but the one of each endpoint is made per endpoint below.
});
afterAll(async () => {
  await g.close();
  await keys.close();
});

const bearer = (key: string): Record<string, string> => ({ authorization: `Bearer ${key}` });

async function send(e: Endpoint, headers: Record<string, string>, shop = SHOP): Promise<HttpAnswer> {
  const path =
    (e.shopIn === 'command' || e.shopIn === 'parked') && shop === OTHER
      ? e.path.replace(OWN_COMMAND, OTHER_COMMAND)
      : e.shopIn === 'query' && shop === OTHER
        ? `${e.path}&shop=${OTHER}`
        : e.path;
  const h = { ...headers, ...(e.shopIn === 'x-shop' && shop !== SHOP ? { 'x-shop': shop } : {}) };
  return fetchAnswer(`${g.url}${path}`, {
    method: e.method,
    headers: { 'content-type': 'application/json', ...h },
    ...(e.body ? { body: JSON.stringify(e.body(shop)) } : {}),
  });
}

const CASES = ['no key', 'wrong key', 'malformed key', 'expired key', 'revoked key', 'wrong scope', 'other shop', 'own shop'] as const;

describe.each(ENDPOINTS)('$method $path with a per-shop key (D28)', (e) => {
  const refusedAndNothingAppended = (r: HttpAnswer, appendedBefore: number) => {
    expect(g.appended.length).toBe(appendedBefore);
    expect(r.text).not.toContain('isk_');
  };

  // A key acting on its own shop's parked command goes all the way to the resolution: that is
  // tests/integration/operator-api.int.test.ts's, on the real tables.
  it.each(e.shopIn === 'parked' ? CASES.filter((c) => c !== 'own shop') : CASES)('%s', async (c) => {
    const before = g.appended.length;
    const unauthorized = (r: HttpAnswer) => {
      expect(r.status).toBe(401);
      expect(r.text).toBe('unauthorized');
      expect(r.headers.get('www-authenticate')).toBe('Bearer');
      refusedAndNothingAppended(r, before);
    };
    if (c === 'no key') {
      // No credential at all: what the spec's rule 1 answers, with the scheme a key would use.
      return unauthorized(await send(e, {}));
    }
    if (c === 'wrong key') return unauthorized(await send(e, bearer(`isk_${'A'.repeat(43)}`)));
    if (c === 'malformed key') return unauthorized(await send(e, bearer('not-a-key')));
    if (c === 'expired key') return unauthorized(await send(e, bearer(k['expired']!)));
    if (c === 'revoked key') return unauthorized(await send(e, bearer(k['revoked']!)));

    if (e.scope === null) {
      // Platform-only: no key may use it, whatever its scopes or shop.
      const r = await send(e, bearer(k['own']!));
      expect(r.status).toBe(403);
      expect(r.json).toEqual({ ok: false, error: 'this endpoint requires the platform credential' });
      expect(r.headers.get('x-error-code')).toBe('platform_only');
      return refusedAndNothingAppended(r, before);
    }
    if (c === 'wrong scope') {
      const { key } = await keys.create({
        shop: SHOP,
        scopes: (['products:write', 'inventory:write', 'orders:write', 'registry:write', 'commands:read', 'admin'] as Scope[]).filter(
          (s) => s !== e.scope,
        ),
      });
      const r = await send(e, bearer(key));
      expect(r.status).toBe(403);
      expect(r.json).toEqual({ ok: false, error: `missing scope ${e.scope}` });
      expect(r.headers.get('www-authenticate')).toBe(`Bearer error="insufficient_scope", scope="${e.scope}"`);
      return refusedAndNothingAppended(r, before);
    }
    if (c === 'other shop') {
      const r = await send(e, bearer(k['own']!), OTHER);
      if (e.shopIn === 'command' || e.shopIn === 'parked') {
        // Another shop's command is not revealed: the same 404 as an id that does not exist.
        expect(r.status).toBe(404);
        expect(r.json).toEqual({ ok: false, error: e.shopIn === 'parked' ? 'parked command not found' : 'command not found' });
      } else {
        expect(r.status).toBe(403);
        expect(r.json).toEqual({ ok: false, error: 'forbidden for this shop' });
        expect(r.headers.get('x-error-code')).toBe('forbidden_shop');
      }
      return refusedAndNothingAppended(r, before);
    }
    // Own shop: accepted, as with the platform secret.
    const r = await send(e, bearer(k['own']!));
    const platform = await send(e, e.platform);
    if (e.shopIn === 'query') {
      // The key's list is its own shop's, as if `?shop=` named it.
      expect(r.status, r.text).toBe(200);
      expect(r.json).toMatchObject({ ok: true, shop: SHOP, commands: [] });
      return expect(platform.json).toMatchObject({ ok: true, shop: null });
    }
    expect(r.status, r.text).toBe(202);
    expect(platform.status).toBe(202);
    if (e.shopIn === 'command') return expect(r.json).toMatchObject({ status: 'pending', command_id: OWN_COMMAND });
    expect(g.appended.length).toBe(before + 2);
    expect(g.appended[before]?.shop).toBe(SHOP);
    // Who wrote what (D28): the key's id, and `platform` for the shared secret.
    expect(g.appended[before]?.actor).toBe(k['ownId']);
    expect(g.appended[before + 1]?.actor).toBe('platform');
  });
});

describe('per-shop keys at the edge (D28)', () => {
  it('refuses an x-shop of another shop on every endpoint, even where the body names none', async () => {
    const before = g.appended.length;
    const r = await fetchAnswer(`${g.url}/api/ingest/products`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-shop': OTHER, ...bearer(k['own']!) },
      body: JSON.stringify({ shop: SHOP, products: [] }),
    });
    expect(r.status).toBe(403);
    expect(g.appended.length).toBe(before);
  });

  it('takes the shop of the key on the products bulk upsert when x-shop is not sent', async () => {
    const before = g.appended.length;
    const r = await fetchAnswer(`${g.url}/api/products/bulk-upsert`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...bearer(k['own']!) },
      body: JSON.stringify({ products: [{ barcode: BARCODE, product_name: 'Tea' }] }),
    });
    expect(r.status).toBe(202);
    expect(g.appended[before]?.shop).toBe(SHOP);
  });

  it('takes a key sent beside the cron secret without x-shop (the cron secret alone is no credential: it was 400 x-shop header required)', async () => {
    const before = g.appended.length;
    const r = await fetchAnswer(`${g.url}/api/products/bulk-upsert`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-cron-secret': TEST_CRON_SECRET, ...bearer(k['own']!) },
      body: JSON.stringify({ products: [{ barcode: BARCODE, product_name: 'Tea' }] }),
    });
    expect(r.status).toBe(202);
    expect(g.appended[before]?.shop).toBe(SHOP);
    const alone = await fetchAnswer(`${g.url}/api/products/bulk-upsert`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-cron-secret': TEST_CRON_SECRET },
      body: JSON.stringify({ products: [] }),
    });
    expect([alone.status, alone.json?.error]).toEqual([400, 'x-shop header required']);
  });

  it('refuses a key of another shop than the body names before validating the body', async () => {
    const r = await fetchAnswer(`${g.url}/api/ingest/inventory-snapshot`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...bearer(k['own']!) },
      body: JSON.stringify({ shop: OTHER, lines: 'not lines' }),
    });
    expect(r.status).toBe(403);
  });

  it('answers the shared secrets as the spec says, and a wrong key is not rescued by them nor they by it', async () => {
    const r = await fetchAnswer(`${g.url}/api/ingest/products`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-ingest-secret': 'wrong' },
      body: JSON.stringify({ shop: SHOP, products: [] }),
    });
    expect(r.status).toBe(401);
    expect(r.text).toBe('unauthorized');
  });
});

describe('PLATFORM_SECRETS_FOR_RETAILERS=off (D28)', () => {
  let off: TestGateway;
  beforeAll(async () => {
    off = await startTestGateway({ platformSecretsForRetailers: false }, { pool, keys });
  });
  afterAll(() => off.close());

  it('refuses the shared secrets on retailer endpoints and keeps them on the platform-only ones', async () => {
    for (const e of ENDPOINTS) {
      const r = await fetchAnswer(`${off.url}${e.path}`, {
        method: e.method,
        headers: { 'content-type': 'application/json', ...e.platform },
        ...(e.body ? { body: JSON.stringify(e.body(SHOP)) } : {}),
      });
      // The platform's own endpoints: the daily snapshot, the keys and the operator API.
      if (e.scope === null || e.scope === 'admin') expect(r.status, e.path).not.toBe(401);
      else {
        expect(r.status, e.path).toBe(401);
        expect(r.headers.get('www-authenticate')).toBe('Bearer');
      }
    }
  });

  it('still takes a key', async () => {
    const r = await fetchAnswer(`${off.url}/api/commands/${OWN_COMMAND}`, { headers: bearer(k['own']!) });
    expect(r.status).toBe(202);
  });
});
