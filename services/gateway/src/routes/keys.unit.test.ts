import { describe, expect, it } from 'vitest';
import { fetchAnswer, TEST_INGEST_SECRET, useTestGateway } from '../../testing/testGateway.ts';

// GET /api/admin/keys?shop= (D28): the shop is read as a body's `shop` is (1 to 255 characters,
// counted as code points), and a value PostgreSQL could not compare (NUL) is a 400, not a 500.
const g = useTestGateway();
const list = (query: string) => fetchAnswer(`${g.url}/api/admin/keys?${query}`, { headers: { 'x-ingest-secret': TEST_INGEST_SECRET } });

describe('GET /api/admin/keys?shop=', () => {
  it('takes one shop of 1 to 255 characters, however many UTF-16 units they take', async () => {
    expect((await list(`shop=${encodeURIComponent('😀'.repeat(255))}`)).status).toBe(200);
    for (const query of [`shop=${encodeURIComponent('😀'.repeat(256))}`, 'shop=', 'shop=a&shop=b'])
      expect((await list(query)).json, query).toEqual({ ok: false, error: 'shop must be one shop, 1 to 255 characters' });
  });

  it('refuses a NUL (%00) with 400', async () => {
    const r = await list('shop=a%00b');
    expect([r.status, r.json]).toEqual([400, { ok: false, error: 'shop must not contain NUL (\\u0000)' }]);
  });
});
