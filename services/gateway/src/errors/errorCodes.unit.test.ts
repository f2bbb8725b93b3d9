import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pool } from '@ingest/db';
import { ERROR_CODE_HEADER, ERROR_CODES, replyErrorCode, type ErrorCode } from './catalog.ts';
import { startTestGateway, TEST_INGEST_SECRET, type TestGateway } from '../../testing/testGateway.ts';

// Error codes (docs/api.md#error-codes): every error answer names a stable code of the catalog
// in X-Error-Code, with the catalog's status, while the body keeps the spec's shape.
let gw: TestGateway;
let closed: TestGateway;
let full: TestGateway;
let small: TestGateway;
beforeAll(async () => {
  small = await startTestGateway({ bodyLimitBytes: 1024 });
  gw = await startTestGateway({ shopRateLinesPerS: 1, shopBurstLines: 2 });
  closed = await startTestGateway({ ingestSecrets: [] });
  full = await startTestGateway(
    {},
    { pool: { query: async () => Promise.reject(Object.assign(new Error('down'), { code: 'ECONNREFUSED' })) } as unknown as Pool },
  );
});
afterAll(async () => {
  await Promise.all([gw.close(), closed.close(), full.close(), small.close()]);
});

const auth = { 'x-ingest-secret': TEST_INGEST_SECRET, 'content-type': 'application/json' };
const snapshot = (shop: string, lines = 1) =>
  JSON.stringify({
    shop,
    source_system: 'wms',
    location_id: '00000000-0000-4000-8000-000000000001',
    lines: Array.from({ length: lines }, (_, i) => ({ barcode: `B${i}`, on_hand_qty: 1 })),
  });

async function answer(url: string, init: RequestInit = {}): Promise<{ status: number; code: string | null; body: string }> {
  const r = await fetch(url, init);
  return { status: r.status, code: r.headers.get(ERROR_CODE_HEADER), body: await r.text() };
}

describe('X-Error-Code', () => {
  const cases: Array<[string, () => Promise<{ status: number; code: string | null; body: string }>, ErrorCode, string]> = [
    ['no secret', () => answer(`${gw.url}/api/ingest/products`, { method: 'POST', body: '{}' }), 'unauthorized', 'unauthorized'],
    [
      'secret not configured',
      () => answer(`${closed.url}/api/ingest/products`, { method: 'POST', headers: auth, body: '{}' }),
      'not_configured',
      '{"ok":false,"error":"INGEST_SECRET not configured"}',
    ],
    [
      'not JSON',
      () => answer(`${gw.url}/api/ingest/products`, { method: 'POST', headers: auth, body: '{' }),
      'invalid_json',
      '{"ok":false,"error":"invalid JSON body"}',
    ],
    [
      'shop missing',
      () => answer(`${gw.url}/api/ingest/products`, { method: 'POST', headers: auth, body: '{"products":[]}' }),
      'invalid_request',
      '',
    ],
    [
      'unknown field (D27)',
      () => answer(`${gw.url}/api/ingest/products`, { method: 'POST', headers: auth, body: '{"shop":"a","products":[],"colour":1}' }),
      'invalid_request',
      '',
    ],
    [
      'bad Idempotency-Key',
      () =>
        answer(`${gw.url}/api/ingest/products`, {
          method: 'POST',
          headers: { ...auth, 'idempotency-key': 'é' },
          body: '{"shop":"a","products":[]}',
        }),
      'invalid_header',
      '',
    ],
    [
      'bad dry_run',
      () => answer(`${gw.url}/api/ingest/inventory-snapshot?dry_run=maybe`, { method: 'POST', headers: auth, body: snapshot('a.example') }),
      'invalid_header',
      '',
    ],
    ['malformed URL', () => answer(`${gw.url}/api/commands/%ZZ`, { headers: auth }), 'malformed_url', ''],
    ['no route', () => answer(`${gw.url}/nowhere`), 'not_found', ''],
    ['a method the path does not serve', () => answer(`${gw.url}/api/ingest/products`, { method: 'PUT' }), 'method_not_allowed', ''],
    [
      'removed endpoint (D12)',
      () => answer(`${gw.url}/api/pixel-events`, { method: 'POST' }),
      'removed',
      '{"ok":false,"error":"removed in v2"}',
    ],
    [
      'body over the limit (D11)',
      () =>
        answer(`${small.url}/api/ingest/products`, {
          method: 'POST',
          headers: auth,
          body: JSON.stringify({ shop: 'a', products: [], pad: 'x'.repeat(4096) }),
        }),
      'body_too_large',
      '{"ok":false,"error":"request body too large"}',
    ],
    [
      'unsupported encoding',
      () => answer(`${gw.url}/api/ingest/products`, { method: 'POST', headers: { ...auth, 'content-encoding': 'compress' }, body: '{}' }),
      'unsupported_encoding',
      '',
    ],
    [
      'database down',
      () => answer(`${full.url}/api/commands/00000000-0000-4000-8000-000000000001`, { headers: auth }),
      'dependency_unavailable',
      '',
    ],
  ];

  it.each(cases)("%s: the code, with the status the catalog gives it, beside the spec's body", async (_name, send, code, body) => {
    const r = await send();
    expect(r.code).toBe(code);
    expect(r.status).toBe(ERROR_CODES[code].status);
    if (body) expect(r.body).toBe(body);
    if (r.body.startsWith('{'))
      expect(Object.keys(JSON.parse(r.body) as object).filter((k) => k !== 'ok' && k !== 'error' && k !== 'error_kind')).toEqual([]);
  });

  it('a shop over its own budget: shop_over_budget, with Retry-After; another shop is served', async () => {
    const first = await answer(`${gw.url}/api/ingest/inventory-snapshot`, {
      method: 'POST',
      headers: auth,
      // 3 lines from a bucket of 2: admitted, and 1 line in debt.
      body: snapshot('noisy.example', 3),
    });
    expect(first.status).toBe(202);
    const refused = await fetch(`${gw.url}/api/ingest/inventory-snapshot`, {
      method: 'POST',
      headers: auth,
      body: snapshot('noisy.example', 2),
    });
    expect(refused.status).toBe(429);
    expect(refused.headers.get(ERROR_CODE_HEADER)).toBe('shop_over_budget');
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(
      (await answer(`${gw.url}/api/ingest/inventory-snapshot`, { method: 'POST', headers: auth, body: snapshot('quiet.example', 1) })).code,
    ).toBeNull();
  });

  it('a success carries none', async () => {
    const r = await answer(`${gw.url}/api/ingest/products`, {
      method: 'POST',
      headers: auth,
      body: '{"shop":"ok.example","products":[{"barcode":"B1","product_name":"Tea"}]}',
    });
    expect(r.status).toBe(202);
    expect(r.code).toBeNull();
  });
});

describe('replyErrorCode', () => {
  it("a decider's 422 carries its error_kind; stored 503s and other statuses map by status; successes none", () => {
    expect(replyErrorCode(422, { ok: false, error_kind: 'location_unresolved', error: 'x' })).toBe('location_unresolved');
    expect(replyErrorCode(422, { ok: false, error_kind: 'skipped', error: 'x' })).toBe('skipped');
    expect(replyErrorCode(422, { ok: false, error_kind: 'something_new', error: 'x' })).toBe('invalid_payload');
    expect(replyErrorCode(503, { ok: false, error: 'x' })).toBe('dependency_unavailable');
    expect(replyErrorCode(200, { ok: true })).toBeNull();
  });

  it('every code has a meaning and an error status', () => {
    for (const [code, d] of Object.entries(ERROR_CODES)) {
      expect(code).toMatch(/^[a-z]+(_[a-z]+)*$/);
      expect(d.status).toBeGreaterThanOrEqual(400);
      expect(d.meaning.length).toBeGreaterThan(10);
    }
  });
});
