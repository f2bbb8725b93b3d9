import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { leaksInternals } from '@ingest/gateway/testing';
import { CRON_SECRET, get, INGEST_SECRET, post, startPipeline, type HttpResult, type TestPipeline } from '../support/pipeline.ts';

// The gateway's error catalog through the real pipeline, one or two cases per path: the answers
// that need Kafka, the projector or PostgreSQL (a 200 applied, a command's visibility by shop, the
// in-flight bound with real applies) or runGateway's own server (Node's parser errors, BODY_TIMEOUT).
// The rule matrices (D8, D9, D11, D12, auth before body, hostile bodies) are tested at the
// HTTP edge with in-memory ports: services/gateway/src/errors/catalog.unit.test.ts.
let p: TestPipeline;
beforeAll(async () => {
  p = await startPipeline();
});
afterAll(async () => p?.stop());

const base = (port?: number): string => (port === undefined ? p.url() : `http://127.0.0.1:${port}`);
const cron = (shop?: string): Record<string, string> => ({
  'x-cron-secret': CRON_SECRET,
  ...(shop === undefined ? {} : { 'x-shop': shop }),
});
const ing = (secret = INGEST_SECRET): Record<string, string> => ({ 'x-ingest-secret': secret });
const item = (barcode: string, extra: Record<string, unknown> = {}) => ({ barcode, product_name: `Product ${barcode}`, ...extra });

/** Every error answer seen in this file, for the "no stack trace, no SQL" rule (D11). */
const errorAnswers: { what: string; r: HttpResult }[] = [];

function seen(what: string, r: HttpResult): HttpResult {
  if (r.status >= 400) {
    errorAnswers.push({ what, r });
    expect(leaksInternals(r.text), `${what}: ${r.text}`).toBe(false);
  }
  return r;
}

async function productCount(shop: string): Promise<number> {
  const { rows } = await p.db.query<{ n: number }>('SELECT count(*)::int AS n FROM public.products WHERE shop = $1', [shop]);
  return rows[0]!.n;
}

describe('D8: /api/products/bulk-upsert through the pipeline', () => {
  const body = { products: [item('D8')] };

  it('right secret and x-shop -> 200 (the control case)', async () => {
    const r = await post(`${base()}/api/products/bulk-upsert`, body, cron('d8.example'));
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ ok: true, created: 1, updated: 0, unchanged: 0, errors: [] });
  });
});

describe('D11: body and field errors', () => {
  const ingestUrl = () => `${base()}/api/ingest/products`;
  const bulkUrl = () => `${base()}/api/products/bulk-upsert`;

  it('10,000 products -> 200, created 10000, in reasonable time (both endpoints)', async () => {
    for (const endpoint of ['bulk', 'ingest'] as const) {
      const shop = `d11-max-${endpoint}.example`;
      const products = Array.from({ length: 10_000 }, (_, i) => item(`MAX-${i}`, { current_price: i }));
      const started = performance.now();
      const r = endpoint === 'bulk' ? await post(bulkUrl(), { products }, cron(shop)) : await post(ingestUrl(), { shop, products }, ing());
      const ms = performance.now() - started;
      expect(r.status, r.text.slice(0, 300)).toBe(200);
      expect(r.json).toMatchObject({ ok: true, created: 10_000, updated: 0, unchanged: 0, errors: [] });
      expect(ms, `${endpoint}: 10,000 products took ${Math.round(ms)} ms`).toBeLessThan(15_000);
      expect(await productCount(shop)).toBe(10_000);
    }
  });
});

describe('D13: in-flight bytes bound', () => {
  let port: number;
  beforeAll(async () => {
    // One connection may hold a quarter of the budget (docs/api.md#admission), so bodies here stay under 2,048 bytes.
    port = (await p.startGateway({ MAX_INFLIGHT_BYTES: '8192' })).port;
  });

  it('concurrent bodies over MAX_INFLIGHT_BYTES: each is 200 (applied) or 429 with Retry-After, nothing else', async () => {
    const n = 8;
    const reqs = Array.from({ length: n }, (_, i) => {
      const shop = `d13-${i}.example`;
      const products = Array.from({ length: 10 }, (_, j) => item(`L${i}-${j}`, { brand: 'b'.repeat(100) }));
      const body = { shop, products };
      expect(Buffer.byteLength(JSON.stringify(body))).toBeGreaterThan(1536);
      expect(Buffer.byteLength(JSON.stringify(body))).toBeLessThanOrEqual(2048);
      return { shop, products, promise: post(`${base(port)}/api/ingest/products`, body, ing()) };
    });
    const results = await Promise.all(reqs.map(async (r) => ({ ...r, res: await r.promise })));
    const statuses = results.map((r) => r.res.status);
    for (const r of results) expect([200, 429], `${r.shop}: ${r.res.status} ${r.res.text}`).toContain(r.res.status);
    expect(statuses.filter((s) => s === 429).length, `statuses ${statuses.join(',')}`).toBeGreaterThanOrEqual(1);
    expect(statuses.filter((s) => s === 200).length, `statuses ${statuses.join(',')}`).toBeGreaterThanOrEqual(1);

    for (const r of results) {
      if (r.res.status === 429) {
        seen(`429 ${r.shop}`, r.res);
        const retryAfter = r.res.headers.get('retry-after');
        expect(retryAfter).not.toBeNull();
        expect(Number(retryAfter)).toBeGreaterThan(0);
        expect(r.res.json).toEqual({ ok: false, error: expect.any(String) });
        expect(await productCount(r.shop)).toBe(0);
      } else {
        expect(r.res.json).toMatchObject({ ok: true, created: r.products.length, errors_count: 0 });
        expect(await productCount(r.shop)).toBe(r.products.length);
      }
    }
  });

  it('once the burst is over, the same gateway accepts again (the bound is released)', async () => {
    const r = await post(
      `${base(port)}/api/ingest/products`,
      { shop: 'd13-after.example', products: [item('AFTER', { brand: 'b'.repeat(900), variant_name: 'v'.repeat(900) })] },
      ing(),
    );
    expect(r.status, r.text).toBe(200);
    expect(r.json).toMatchObject({ ok: true, created: 1, errors_count: 0 });
    expect(await productCount('d13-after.example')).toBe(1);
  });
});

describe("hostile input on the real server (runGateway.ts): Node's parser errors and BODY_TIMEOUT", () => {
  /** Writes raw bytes, optionally more later, and reads until the server closes the connection. */
  function raw(port: number, first: string, later?: { afterMs: number; text: string }): Promise<string> {
    return new Promise((resolve) => {
      const s = connect(port, '127.0.0.1');
      let data = '';
      s.setEncoding('utf8');
      s.on('data', (c: string) => (data += c));
      s.on('error', () => {});
      const t = later ? setTimeout(() => s.writable && s.write(later.text), later.afterMs) : undefined;
      s.on('close', () => {
        clearTimeout(t);
        resolve(data);
      });
      s.write(first);
    });
  }

  it("both Content-Length and Transfer-Encoding -> JSON 400 in the spec shape with the safe headers, not Node's bare text", async () => {
    const port = p.gateways[0]!.port;
    const answer = await raw(
      port,
      [
        'POST /api/ingest/products HTTP/1.1',
        'Host: x',
        `x-ingest-secret: ${INGEST_SECRET}`,
        'Content-Length: 2',
        'Transfer-Encoding: chunked',
        '',
        '2',
        '{}',
        '0',
        '',
        '',
      ].join('\r\n'),
    );
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(answer).toMatch(/^content-type: application\/json/im);
    expect(answer).toMatch(/^x-content-type-options: nosniff$/im);
    expect(answer.slice(answer.indexOf('\r\n\r\n') + 4)).toBe('{"ok":false,"error":"bad request"}');
  });

  it('a body slower than BODY_TIMEOUT -> 408, and the connection is closed', async () => {
    const port = (await p.startGateway({ BODY_TIMEOUT: '300ms' })).port;
    const started = Date.now();
    const answer = await raw(
      port,
      ['POST /api/ingest/products HTTP/1.1', 'Host: x', `x-ingest-secret: ${INGEST_SECRET}`, 'Content-Length: 50', '', '{"shop":'].join(
        '\r\n',
      ),
      {
        // The rest of the body comes 10 s later, far past the 300 ms, and the 408 must come before it (it
        // was 2 s: a loaded machine can delay the timer and the answer by more than 1.7 s).
        afterMs: 10_000,
        text: '"late"}',
      },
    );
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(answer.slice(answer.indexOf('\r\n\r\n') + 4)).toBe('{"ok":false,"error":"request body timeout"}');
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});

describe('GET /api/commands/{id}', () => {
  it('a real command: visible with the ingest secret and with the cron secret of its shop, 404 for another shop', async () => {
    const accepted = await post(
      `${base()}/api/ingest/products`,
      { shop: 'cmd.example', products: [item('CMD')] },
      { ...ing(), prefer: 'respond-async' },
    );
    expect(accepted.status).toBe(202);
    const url = `${base()}${accepted.json.result_url as string}`;
    const done = async (h: Record<string, string>) => {
      for (let i = 0; i < 300; i++) {
        const r = await get(url, h);
        if (r.status !== 202) return r;
        await new Promise((res) => setTimeout(res, 50));
      }
      throw new Error('command still pending');
    };
    const viaIngest = await done(ing());
    expect(viaIngest.status).toBe(200);
    expect(viaIngest.json).toMatchObject({ ok: true, created: 1 });
    expect((await done(cron('cmd.example'))).json).toEqual(viaIngest.json);
    const other = seen('other shop', await get(url, cron('other.example')));
    expect(other.status).toBe(404);
    expect(other.json).toEqual({ ok: false, error: expect.any(String) });
  });
});

// Inputs that pass the HTTP schemas but that the command envelope or PostgreSQL cannot take. Own
// pipeline (and a short reply timeout): a command the projector cannot finish must not block the
// main pipeline of this file.
// (A blank shop and a NUL in an item: refused at the edge, errorCatalog.unit.test.ts.)
describe('hostile but well-formed JSON: refused at the gateway or reported, never stuck (D6, D11, D13)', () => {
  let q: TestPipeline;
  beforeAll(async () => {
    q = await startPipeline({ env: { REPLY_TIMEOUT_MS: '3000' } });
  });
  afterAll(async () => q?.stop());

  /** The final answer of a request: its own if not 202, else its result_url polled until done. */
  async function finalAnswer(r: HttpResult, waitMs = 20_000): Promise<HttpResult> {
    if (r.status !== 202) return r;
    const deadline = Date.now() + waitMs;
    for (;;) {
      const g = await get(`${q.url()}${r.json.result_url as string}`, ing());
      if (g.status !== 202 || Date.now() > deadline) return g;
      await new Promise((res) => setTimeout(res, 100));
    }
  }

  it('a NUL character in the shop is refused (4xx ok:false) and does not stop the commands of other shops', async () => {
    const r = await finalAnswer(
      await post(`${q.url()}/api/ingest/products`, { shop: 'nul\u0000shop.example', products: [item('X')] }, ing()),
      5_000,
    );
    seen('NUL shop', r);
    expect.soft([400, 422], `NUL shop: ${r.status} ${r.text}`).toContain(r.status);
    expect.soft(r.json).toMatchObject({ ok: false, error: expect.any(String) });

    const shops = Array.from({ length: 9 }, (_, i) => `after-nul-${i}.example`);
    const answers = await Promise.all(
      shops.map(async (shop) => finalAnswer(await post(`${q.url()}/api/ingest/products`, { shop, products: [item('Y')] }, ing()))),
    );
    expect(answers.map((a) => `${a.status} ${a.text.slice(0, 60)}`)).toEqual(answers.map(() => expect.stringMatching(/^200 /)));
  });
});
