import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { documentedAnswers } from '../support/openapi.ts';
import { fetchAnswer, INGEST_SECRET, post, startPipeline, waitFor, type HttpResult, type TestPipeline } from '../support/pipeline.ts';

// The refusals the OpenAPI document lists beside 400/401/404/410/413/503 (checked by
// routes/docs.unit.test.ts) are what a real gateway answers, on the real broker and database: 409
// (an Idempotency-Key still in flight), 415, 422 and a shop's 429, each checked against the served
// /openapi.json (status documented for the path, media type, body schema). No projector runs, so an
// accepted request waits for its result for REPLY_TIMEOUT_MS.
let p: TestPipeline;
let documented: Awaited<ReturnType<typeof documentedAnswers>>;
const ING = { 'x-ingest-secret': INGEST_SECRET };

beforeAll(async () => {
  p = await startPipeline({ projector: false, env: { REPLY_TIMEOUT_MS: '3000', SHOP_RATE_LINES_PER_S: '1', SHOP_BURST_LINES: '2' } });
  documented = await documentedAnswers(p.url());
});
afterAll(() => p.stop());

const products = (shop: string, n = 1) => ({
  shop,
  products: Array.from({ length: n }, (_, i) => ({ barcode: String(i + 1), product_name: 'x' })),
});

const raw = (path: string, body: string, headers: Record<string, string>): Promise<HttpResult> =>
  fetchAnswer(`${p.url()}${path}`, { method: 'POST', headers: { ...ING, ...headers }, body });

describe('refusals of a real gateway match the served OpenAPI document', () => {
  it('409: a second request with an Idempotency-Key whose first is still waiting for its result', async () => {
    const key = { 'Idempotency-Key': `doc-${p.id}` };
    const first = post(`${p.url()}/api/ingest/products`, products('idem.example'), { ...ING, ...key });
    await waitFor(
      async () => (await p.db.query('SELECT 1 FROM agent_runtime.request_keys WHERE key = $1', [key['Idempotency-Key']])).rowCount === 1,
      5_000,
      'the key recorded',
    );
    const second = await post(`${p.url()}/api/ingest/products`, products('idem.example'), { ...ING, ...key });
    expect(second.status).toBe(409);
    expect(second.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(documented('post', '/api/ingest/products', second)).toBeNull();
    const answered = await first;
    expect(answered.status).toBe(202);
    expect(documented('post', '/api/ingest/products', answered)).toBeNull();
  });

  it('415: a Content-Encoding the gateway does not read', async () => {
    const r = await raw('/api/ingest/products', JSON.stringify(products('enc.example')), {
      'content-type': 'application/json',
      'content-encoding': 'compress',
    });
    expect(r.status).toBe(415);
    expect(documented('post', '/api/ingest/products', r)).toBeNull();
  });

  it('422: a line of an inventory write its schema refuses', async () => {
    const r = await post(
      `${p.url()}/api/ingest/inventory-available`,
      { shop: 'lines.example', source_system: 'pos', mode: 'absolute', lines: [{ no_barcode: true }] },
      ING,
    );
    expect(r.status, r.text).toBe(422);
    expect(documented('post', '/api/ingest/inventory-available', r)).toBeNull();
  });

  it('429: a shop past its lines/s budget, with Retry-After', async () => {
    // The first body, larger than the bucket (2 lines), is admitted on the full bucket and leaves it 18
    // lines in debt: the next is refused for the next 20 s, not only within 2 s of the first, and is sent
    // once the first was admitted (its request row is recorded), not after a guessed 200 ms.
    const first = post(`${p.url()}/api/ingest/products`, products('noisy.example', 20), ING);
    await waitFor(
      async () => (await p.db.query(`SELECT 1 FROM agent_runtime.command_requests WHERE shop = 'noisy.example'`)).rowCount === 1,
      5_000,
      'the first body admitted',
    );
    const over = await post(`${p.url()}/api/ingest/products`, products('noisy.example', 2), ING);
    expect((await first).status).toBe(202);
    expect(over.status).toBe(429);
    expect(over.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(documented('post', '/api/ingest/products', over)).toBeNull();
  });
});
