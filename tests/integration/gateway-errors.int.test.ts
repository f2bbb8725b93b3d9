import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CRON_SECRET, get, INGEST_SECRET, post, startPipeline, type HttpResult, type TestPipeline } from '../support/pipeline.ts';

// The gateway's error catalog against the real pipeline: spec Authentication / Errors / Removed
// interfaces, D8 (products auth), D9 (secret lists), D11 (status mapping), D12 (removed), D13 (overload).
let p: TestPipeline;
beforeAll(async () => {
  p = await startPipeline();
});
afterAll(async () => p?.stop());

const base = (port?: number): string => (port === undefined ? p.url() : `http://127.0.0.1:${port}`);
const cron = (shop?: string): Record<string, string> => ({ 'x-cron-secret': CRON_SECRET, ...(shop === undefined ? {} : { 'x-shop': shop }) });
const ing = (secret = INGEST_SECRET): Record<string, string> => ({ 'x-ingest-secret': secret });
const item = (barcode: string, extra: Record<string, unknown> = {}) => ({ barcode, product_name: `Product ${barcode}`, ...extra });

/** Every error answer seen in this file, for the "no stack trace, no SQL" rule (D11). */
const errorAnswers: { what: string; r: HttpResult }[] = [];

function leaksInternals(text: string): boolean {
  return (
    /^\s*at\s/m.test(text) || // stack frame lines
    /\bat .+\(.+:\d+:\d+\)/.test(text) ||
    /\.(ts|js|mjs):\d+/.test(text) ||
    /\b(SELECT|INSERT|UPDATE|DELETE)\b[\s\S]*\b(FROM|INTO|SET|WHERE)\b/i.test(text) ||
    /\b(relation|column) "[^"]+"/i.test(text) ||
    /syntax error at or near|violates (unique|foreign key|check) constraint|duplicate key value/i.test(text)
  );
}

function seen(what: string, r: HttpResult): HttpResult {
  if (r.status >= 400) {
    errorAnswers.push({ what, r });
    expect(leaksInternals(r.text), `${what}: ${r.text}`).toBe(false);
  }
  return r;
}

async function expectUnauthorized(what: string, r: HttpResult): Promise<void> {
  seen(what, r);
  expect(r.status, what).toBe(401);
  expect(r.text, what).toBe('unauthorized');
  expect(r.headers.get('content-type') ?? '', what).toMatch(/^text\/plain/);
}

function expectJsonError(what: string, r: HttpResult, status: number, body: unknown): void {
  seen(what, r);
  expect(r.status, `${what}: ${r.text}`).toBe(status);
  expect(r.headers.get('content-type') ?? '', what).toMatch(/^application\/json/);
  expect(r.json, what).toEqual(body);
}

async function productCount(shop: string): Promise<number> {
  const { rows } = await p.db.query<{ n: number }>('SELECT count(*)::int AS n FROM public.products WHERE shop = $1', [shop]);
  return rows[0]!.n;
}

/**
 * One HTTP/1.1 request written byte for byte on a socket, for header values fetch would normalise.
 * Returns the status and the body (Connection: close, so the body runs to the end of the stream).
 */
function rawPost(port: number, path: string, headerLines: string[], body: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const s = connect(port, '127.0.0.1');
    let data = '';
    s.setEncoding('utf8');
    s.on('data', (c: string) => (data += c));
    s.on('error', reject);
    s.on('end', () => {
      const [head = '', ...rest] = data.split('\r\n\r\n');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
      const chunked = /transfer-encoding:\s*chunked/i.test(head);
      let text = rest.join('\r\n\r\n');
      if (chunked) {
        let out = '';
        for (;;) {
          const nl = text.indexOf('\r\n');
          const size = parseInt(text.slice(0, nl), 16);
          if (!size) break;
          out += text.slice(nl + 2, nl + 2 + size);
          text = text.slice(nl + 2 + size + 2);
        }
        text = out;
      }
      resolve({ status, body: text });
    });
    s.write(
      [
        `POST ${path} HTTP/1.1`,
        'Host: 127.0.0.1',
        'Content-Type: application/json',
        `Content-Length: ${Buffer.byteLength(body)}`,
        'Connection: close',
        ...headerLines,
        '',
        body,
      ].join('\r\n'),
    );
  });
}

describe('D8: /api/products/bulk-upsert auth', () => {
  const body = { products: [item('D8')] };

  it('missing x-cron-secret -> 401 text `unauthorized`', async () => {
    await expectUnauthorized('no cron secret', await post(`${base()}/api/products/bulk-upsert`, body, { 'x-shop': 'd8.example' }));
    expect(await productCount('d8.example')).toBe(0);
  });

  it('wrong x-cron-secret -> 401 text `unauthorized`', async () => {
    await expectUnauthorized('wrong cron secret', await post(`${base()}/api/products/bulk-upsert`, body, { 'x-cron-secret': 'nope', 'x-shop': 'd8.example' }));
    // The ingest secret is not a cron secret.
    await expectUnauthorized('ingest secret as cron secret', await post(`${base()}/api/products/bulk-upsert`, body, { 'x-cron-secret': INGEST_SECRET, 'x-shop': 'd8.example' }));
    await expectUnauthorized('ingest header on endpoint 1', await post(`${base()}/api/products/bulk-upsert`, body, { ...ing(), 'x-shop': 'd8.example' }));
    expect(await productCount('d8.example')).toBe(0);
  });

  it('right secret but no x-shop -> 400 `x-shop header required`', async () => {
    expectJsonError('no x-shop', await post(`${base()}/api/products/bulk-upsert`, body, cron()), 400, { ok: false, error: 'x-shop header required' });
    expectJsonError('blank x-shop', await post(`${base()}/api/products/bulk-upsert`, body, cron('   ')), 400, { ok: false, error: 'x-shop header required' });
  });

  it('right secret and x-shop -> 200 (the control case)', async () => {
    const r = await post(`${base()}/api/products/bulk-upsert`, body, cron('d8.example'));
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ ok: true, created: 1, updated: 0, unchanged: 0, errors: [] });
  });
});

describe('spec Authentication rule 1: /api/ingest/products', () => {
  const body = { shop: 'auth1.example', products: [item('A1')] };

  it('missing x-ingest-secret -> 401 text `unauthorized`', async () => {
    await expectUnauthorized('no ingest secret', await post(`${base()}/api/ingest/products`, body));
    // The cron secret (and x-shop) does not open endpoint 2.
    await expectUnauthorized('cron credentials on endpoint 2', await post(`${base()}/api/ingest/products`, body, cron('auth1.example')));
    expect(await productCount('auth1.example')).toBe(0);
  });

  it('wrong x-ingest-secret -> 401 text `unauthorized`', async () => {
    await expectUnauthorized('wrong ingest secret', await post(`${base()}/api/ingest/products`, body, ing('wrong')));
    await expectUnauthorized('cron secret as ingest secret', await post(`${base()}/api/ingest/products`, body, ing(CRON_SECRET)));
    await expectUnauthorized('empty ingest secret', await post(`${base()}/api/ingest/products`, body, ing('')));
    expect(await productCount('auth1.example')).toBe(0);
  });
});

describe('rule 2 / D8: secrets not configured -> 503', () => {
  let port: number;
  beforeAll(async () => {
    port = (await p.startGateway({ INGEST_SECRET: '', CRON_SECRET: '' })).port;
  });

  it('no INGEST_SECRET -> 503 `INGEST_SECRET not configured` on /api/ingest/products, with or without a header', async () => {
    const body = { shop: 'nocfg.example', products: [item('N1')] };
    const expected = { ok: false, error: 'INGEST_SECRET not configured' };
    expectJsonError('no header', await post(`${base(port)}/api/ingest/products`, body), 503, expected);
    expectJsonError('some header', await post(`${base(port)}/api/ingest/products`, body, ing(INGEST_SECRET)), 503, expected);
    expectJsonError('empty header', await post(`${base(port)}/api/ingest/products`, body, ing('')), 503, expected);
  });

  it('no CRON_SECRET -> 503 `CRON_SECRET not configured` on /api/products/bulk-upsert, with or without a header', async () => {
    const body = { products: [item('N2')] };
    const expected = { ok: false, error: 'CRON_SECRET not configured' };
    expectJsonError('no header', await post(`${base(port)}/api/products/bulk-upsert`, body, { 'x-shop': 'nocfg.example' }), 503, expected);
    expectJsonError('some header', await post(`${base(port)}/api/products/bulk-upsert`, body, cron('nocfg.example')), 503, expected);
    expectJsonError('empty header', await post(`${base(port)}/api/products/bulk-upsert`, body, { 'x-cron-secret': '', 'x-shop': 'nocfg.example' }), 503, expected);
    expect(await productCount('nocfg.example')).toBe(0);
  });
});

describe('D9: a comma-separated secret list', () => {
  let port: number;
  beforeAll(async () => {
    port = (await p.startGateway({ INGEST_SECRET: 'old,new', CRON_SECRET: 'cron-a, cron-b' })).port;
  });
  const send = (secret: string, barcode: string) =>
    post(`${base(port)}/api/ingest/products`, { shop: 'd9.example', products: [item(barcode)] }, ing(secret));

  it('accepts every listed ingest secret', async () => {
    const a = await send('old', 'OLD');
    expect(a.status, a.text).toBe(200);
    expect(a.json).toMatchObject({ ok: true, created: 1 });
    const b = await send('new', 'NEW');
    expect(b.status, b.text).toBe(200);
    expect(b.json).toMatchObject({ ok: true, created: 1 });
    expect(await productCount('d9.example')).toBe(2);
  });

  it('refuses a prefix, the whole list, empty, other case, and extra characters; the header is compared exactly', async () => {
    for (const secret of ['ol', 'old,new', 'old, new', '', 'OLD', 'newer', 'n ew', 'new,']) {
      await expectUnauthorized(`secret ${JSON.stringify(secret)}`, await send(secret, 'REFUSED'));
    }
    const { rows } = await p.db.query('SELECT 1 FROM public.products WHERE shop = $1 AND barcode = $2', ['d9.example', 'REFUSED']);
    expect(rows).toHaveLength(0);
  });

  it('`new ` with a trailing space: HTTP strips the optional whitespace around a field value, so the value is `new` and is accepted', async () => {
    // RFC 9110 5.5: leading/trailing OWS is not part of the field value; fetch would strip it, so
    // the bytes are written on a raw socket. auth.ts compares the (parsed) value exactly.
    const body = JSON.stringify({ shop: 'd9-ows.example', products: [item('OWS')] });
    const r = await rawPost(port, '/api/ingest/products', ['x-ingest-secret: new   '], body);
    expect(r.status, r.body).toBe(200);
    // Whitespace inside the value is part of it.
    const inner = await rawPost(port, '/api/ingest/products', ['x-ingest-secret: ne w'], body);
    expect(inner.status).toBe(401);
    expect(inner.body).toBe('unauthorized');
  });

  it('the pipeline gateway (single secret) refuses the rotated ones', async () => {
    await expectUnauthorized('old on the default gateway', await post(`${base()}/api/ingest/products`, { shop: 'd9.example', products: [] }, ing('old')));
  });

  it('the cron secret is a list too (entries trimmed)', async () => {
    for (const [secret, barcode] of [
      ['cron-a', 'CA'],
      ['cron-b', 'CB'],
    ] as const) {
      const r = await post(`${base(port)}/api/products/bulk-upsert`, { products: [item(barcode)] }, { 'x-cron-secret': secret, 'x-shop': 'd9-cron.example' });
      expect(r.status, r.text).toBe(200);
    }
    await expectUnauthorized('cron list as one', await post(`${base(port)}/api/products/bulk-upsert`, { products: [] }, { 'x-cron-secret': 'cron-a, cron-b', 'x-shop': 'd9-cron.example' }));
    expect(await productCount('d9-cron.example')).toBe(2);
  });
});

describe('D11: body and field errors', () => {
  const ingestUrl = () => `${base()}/api/ingest/products`;
  const bulkUrl = () => `${base()}/api/products/bulk-upsert`;
  const invalid = { ok: false, error: 'invalid JSON body' };

  it('a body that is not JSON -> 400 `invalid JSON body` (both endpoints)', async () => {
    expectJsonError('ingest {bad', await post(ingestUrl(), '{bad', ing()), 400, invalid);
    expectJsonError('bulk {bad', await post(bulkUrl(), '{bad', cron('d11.example')), 400, invalid);
    expectJsonError('ingest truncated', await post(ingestUrl(), '{"shop":"a","products":[', ing()), 400, invalid);
  });

  it('a JSON root that is not an object -> 400 `invalid JSON body`', async () => {
    for (const raw of ['[]', '[{"shop":"a","products":[]}]', '"a string"', '42', 'null', 'true']) {
      expectJsonError(`ingest root ${raw}`, await post(ingestUrl(), raw, ing()), 400, invalid);
      expectJsonError(`bulk root ${raw}`, await post(bulkUrl(), raw, cron('d11.example')), 400, invalid);
    }
  });

  it('an empty body -> 400 `invalid JSON body`', async () => {
    const answers = [seen('ingest empty', await post(ingestUrl(), '', ing())), seen('bulk empty', await post(bulkUrl(), '', cron('d11.example')))];
    expect(answers.map((r) => [r.status, r.json])).toEqual([
      [400, invalid],
      [400, invalid],
    ]);
  });

  it('missing shop -> 400 `shop required`', async () => {
    expectJsonError('no shop', await post(ingestUrl(), { products: [item('S')] }, ing()), 400, { ok: false, error: 'shop required' });
    expectJsonError('empty shop', await post(ingestUrl(), { shop: '', products: [item('S')] }, ing()), 400, { ok: false, error: 'shop required' });
  });

  it('shop of the wrong type -> 400 `shop must be string`', async () => {
    expectJsonError('shop number', await post(ingestUrl(), { shop: 123, products: [item('S')] }, ing()), 400, { ok: false, error: 'shop must be string' });
  });

  it('missing products -> 400 `products required` (both endpoints)', async () => {
    expectJsonError('ingest no products', await post(ingestUrl(), { shop: 'd11.example' }, ing()), 400, { ok: false, error: 'products required' });
    expectJsonError('bulk no products', await post(bulkUrl(), {}, cron('d11.example')), 400, { ok: false, error: 'products required' });
  });

  it('products not an array -> 400 `products must be array` (both endpoints)', async () => {
    expectJsonError('ingest object', await post(ingestUrl(), { shop: 'd11.example', products: { a: 1 } }, ing()), 400, { ok: false, error: 'products must be array' });
    expectJsonError('bulk string', await post(bulkUrl(), { products: 'B1' }, cron('d11.example')), 400, { ok: false, error: 'products must be array' });
    expect(await productCount('d11.example')).toBe(0);
  });

  it('10,001 products -> 400 naming the limit 10000 (both endpoints), nothing applied', async () => {
    const products = Array.from({ length: 10_001 }, (_, i) => item(`OVER-${i}`));
    for (const [what, r] of [
      ['bulk', await post(bulkUrl(), { products }, cron('d11-over.example'))],
      ['ingest', await post(ingestUrl(), { shop: 'd11-over.example', products }, ing())],
    ] as const) {
      seen(what, r);
      expect(r.status, `${what}: ${r.text.slice(0, 200)}`).toBe(400);
      expect(Object.keys(r.json).sort()).toEqual(['error', 'ok']);
      expect(r.json.ok).toBe(false);
      expect(r.json.error).toMatch(/\b10000\b|\b10,000\b/);
      expect(r.json.error).toMatch(/products/);
    }
    expect(await productCount('d11-over.example')).toBe(0);
  });

  it('10,000 products -> 200, created 10000, in reasonable time (both endpoints)', async () => {
    for (const endpoint of ['bulk', 'ingest'] as const) {
      const shop = `d11-max-${endpoint}.example`;
      const products = Array.from({ length: 10_000 }, (_, i) => item(`MAX-${i}`, { current_price: i }));
      const started = performance.now();
      const r =
        endpoint === 'bulk' ? await post(bulkUrl(), { products }, cron(shop)) : await post(ingestUrl(), { shop, products }, ing());
      const ms = performance.now() - started;
      expect(r.status, r.text.slice(0, 300)).toBe(200);
      expect(r.json).toMatchObject({ ok: true, created: 10_000, updated: 0, unchanged: 0, errors: [] });
      expect(ms, `${endpoint}: 10,000 products took ${Math.round(ms)} ms`).toBeLessThan(15_000);
      expect(await productCount(shop)).toBe(10_000);
    }
  });

  it('an unknown route -> 404 JSON with ok:false', async () => {
    for (const [what, r] of [
      ['POST /api/nope', await post(`${base()}/api/nope`, { a: 1 }, ing())],
      ['GET /nope', await get(`${base()}/nope`)],
      ['GET /api/ingest/products', await get(`${base()}/api/ingest/products`, ing())],
      ['POST /api/ingest/unknown', await post(`${base()}/api/ingest/unknown`, {}, ing())],
    ] as const) {
      seen(what, r);
      expect(r.status, what).toBe(404);
      expect(r.headers.get('content-type') ?? '', what).toMatch(/^application\/json/);
      expect(r.json, what).toEqual({ ok: false, error: expect.any(String) });
    }
  });
});

describe('D11: body size limit', () => {
  let port: number;
  beforeAll(async () => {
    port = (await p.startGateway({ BODY_LIMIT_BYTES: '2048' })).port;
  });

  it('a body over BODY_LIMIT_BYTES -> 413 JSON ok:false (both endpoints), nothing applied', async () => {
    const products = Array.from({ length: 40 }, (_, i) => item(`BIG-${i}`, { brand: 'x'.repeat(60) }));
    const ingestBody = { shop: 'd11-413.example', products };
    expect(Buffer.byteLength(JSON.stringify(ingestBody))).toBeGreaterThan(4096);
    for (const [what, r] of [
      ['ingest', await post(`${base(port)}/api/ingest/products`, ingestBody, ing())],
      ['bulk', await post(`${base(port)}/api/products/bulk-upsert`, { products }, cron('d11-413.example'))],
    ] as const) {
      seen(what, r);
      expect(r.status, `${what}: ${r.text}`).toBe(413);
      expect(r.json).toEqual({ ok: false, error: expect.any(String) });
    }
    expect(await productCount('d11-413.example')).toBe(0);
  });

  it('a body under the limit on the same gateway is accepted', async () => {
    const r = await post(`${base(port)}/api/ingest/products`, { shop: 'd11-413.example', products: [item('SMALL')] }, ing());
    expect(r.status, r.text).toBe(200);
  });

  it('an over-limit body with bad credentials is refused by auth first (401)', async () => {
    const products = Array.from({ length: 40 }, (_, i) => item(`BIG-${i}`, { brand: 'x'.repeat(60) }));
    await expectUnauthorized('413 vs 401', await post(`${base(port)}/api/ingest/products`, { shop: 'x', products }, ing('wrong')));
  });
});

describe('D12: removed interfaces', () => {
  const removed = { ok: false, error: 'removed in v2' };

  it('POST /rest/v1/external_signals and /api/pixel-events -> 410 `removed in v2`, with and without credentials', async () => {
    for (const path of ['/rest/v1/external_signals', '/api/pixel-events']) {
      expectJsonError(`${path} no creds`, await post(`${base()}${path}`, { a: 1 }), 410, removed);
      expectJsonError(`${path} ingest`, await post(`${base()}${path}`, { a: 1 }, ing()), 410, removed);
      expectJsonError(`${path} cron`, await post(`${base()}${path}`, { a: 1 }, cron('d12.example')), 410, removed);
      expectJsonError(`${path} wrong`, await post(`${base()}${path}`, { a: 1 }, { ...ing('wrong'), 'x-cron-secret': 'wrong' }), 410, removed);
      expectJsonError(`${path} bad body`, await post(`${base()}${path}`, '{bad', ing()), 410, removed);
    }
  });
});

describe('D13: in-flight bytes bound', () => {
  let port: number;
  beforeAll(async () => {
    // One connection may hold a quarter of the budget (issue 12), so bodies here stay under 2,048 bytes.
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
    const r = await post(`${base(port)}/api/ingest/products`, { shop: 'd13-after.example', products: [item('AFTER', { brand: 'b'.repeat(900), variant_name: 'v'.repeat(900) })] }, ing());
    expect(r.status, r.text).toBe(200);
    expect(r.json).toMatchObject({ ok: true, created: 1, errors_count: 0 });
    expect(await productCount('d13-after.example')).toBe(1);
  });
});

describe('issue 12 on the real server (runGateway.ts): Node\'s parser errors and BODY_TIMEOUT', () => {
  /** Writes raw bytes, optionally more later, and reads until the server closes the connection. */
  function raw(port: number, first: string, later?: { afterMs: number; text: string }): Promise<string> {
    return new Promise((resolve) => {
      const s = connect(port, '127.0.0.1');
      let data = '';
      s.setEncoding('utf8');
      s.on('data', (c: string) => (data += c));
      s.on('error', () => {});
      s.on('close', () => resolve(data));
      s.write(first);
      if (later) setTimeout(() => s.writable && s.write(later.text), later.afterMs);
    });
  }

  it('both Content-Length and Transfer-Encoding -> JSON 400 in the spec shape with the safe headers, not Node\'s bare text', async () => {
    const port = p.gateways[0]!.port;
    const answer = await raw(port, ['POST /api/ingest/products HTTP/1.1', 'Host: x', `x-ingest-secret: ${INGEST_SECRET}`, 'Content-Length: 2', 'Transfer-Encoding: chunked', '', '2', '{}', '0', '', ''].join('\r\n'));
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(answer).toMatch(/^content-type: application\/json/im);
    expect(answer).toMatch(/^x-content-type-options: nosniff$/im);
    expect(answer.slice(answer.indexOf('\r\n\r\n') + 4)).toBe('{"ok":false,"error":"bad request"}');
  });

  it('a body slower than BODY_TIMEOUT -> 408, and the connection is closed', async () => {
    const port = (await p.startGateway({ BODY_TIMEOUT: '300ms' })).port;
    const started = Date.now();
    const answer = await raw(port, ['POST /api/ingest/products HTTP/1.1', 'Host: x', `x-ingest-secret: ${INGEST_SECRET}`, 'Content-Length: 50', '', '{"shop":'].join('\r\n'), {
      afterMs: 2_000,
      text: '"late"}',
    });
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(answer.slice(answer.indexOf('\r\n\r\n') + 4)).toBe('{"ok":false,"error":"request body timeout"}');
    expect(Date.now() - started).toBeLessThan(2_000);
  });
});

describe('auth before body', () => {
  it('a wrong secret with a malformed body -> 401, not 400 (both endpoints)', async () => {
    await expectUnauthorized('ingest wrong + {bad', await post(`${base()}/api/ingest/products`, '{bad', ing('wrong')));
    await expectUnauthorized('ingest none + {bad', await post(`${base()}/api/ingest/products`, '{bad'));
    await expectUnauthorized('ingest wrong + array', await post(`${base()}/api/ingest/products`, '[]', ing('wrong')));
    await expectUnauthorized('ingest wrong + missing shop', await post(`${base()}/api/ingest/products`, { products: 'x' }, ing('wrong')));
    await expectUnauthorized('bulk wrong + {bad', await post(`${base()}/api/products/bulk-upsert`, '{bad', { 'x-cron-secret': 'wrong', 'x-shop': 'a.example' }));
    await expectUnauthorized('bulk wrong, no shop + {bad', await post(`${base()}/api/products/bulk-upsert`, '{bad', { 'x-cron-secret': 'wrong' }));
  });
});

describe('GET /api/commands/{id}', () => {
  const unknownId = '0190a6e2-0000-7000-8000-000000000000';

  it('an unknown well-formed uuid -> 404 JSON ok:false (ingest secret, and cron secret with x-shop)', async () => {
    for (const [what, headers] of [
      ['ingest', ing()],
      ['cron', cron('cmd.example')],
    ] as const) {
      const r = seen(what, await get(`${base()}/api/commands/${unknownId}`, headers));
      expect(r.status, what).toBe(404);
      expect(r.headers.get('content-type') ?? '').toMatch(/^application\/json/);
      expect(r.json, what).toEqual({ ok: false, error: expect.any(String) });
    }
    const bad = seen('malformed id', await get(`${base()}/api/commands/not-a-uuid`, ing()));
    expect(bad.status).toBe(404);
    expect(bad.json).toEqual({ ok: false, error: expect.any(String) });
  });

  it('no credentials or a wrong secret -> 401 text `unauthorized`', async () => {
    await expectUnauthorized('no creds', await get(`${base()}/api/commands/${unknownId}`));
    await expectUnauthorized('wrong ingest', await get(`${base()}/api/commands/${unknownId}`, ing('wrong')));
    await expectUnauthorized('wrong cron', await get(`${base()}/api/commands/${unknownId}`, { 'x-cron-secret': 'wrong', 'x-shop': 'cmd.example' }));
    await expectUnauthorized('x-shop alone', await get(`${base()}/api/commands/${unknownId}`, { 'x-shop': 'cmd.example' }));
  });

  it('cron secret without x-shop -> 400 `x-shop header required`', async () => {
    expectJsonError('cron no shop', await get(`${base()}/api/commands/${unknownId}`, cron()), 400, { ok: false, error: 'x-shop header required' });
  });

  it('a real command: visible with the ingest secret and with the cron secret of its shop, 404 for another shop', async () => {
    const accepted = await post(`${base()}/api/ingest/products`, { shop: 'cmd.example', products: [item('CMD')] }, { ...ing(), prefer: 'respond-async' });
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

describe('issue 12: hostile requests on the real stack -> their 4xx in the spec shape, never a 500', () => {
  it('a malformed percent-encoding in a path -> 400 `malformed URL`', async () => {
    expectJsonError('GET %ZZ', await get(`${base()}/api/commands/%ZZ`, ing()), 400, { ok: false, error: 'malformed URL' });
  });

  it('Content-Encoding gzip or deflate with a body that is not compressed -> 400 `invalid compressed body`, nothing applied', async () => {
    for (const encoding of ['gzip', 'deflate']) {
      const body = JSON.stringify({ shop: 'i12-gzip.example', products: [item('GZ')] });
      expectJsonError(encoding, await post(`${base()}/api/ingest/products`, body, { ...ing(), 'content-encoding': encoding }), 400, { ok: false, error: 'invalid compressed body' });
    }
    expect(await productCount('i12-gzip.example')).toBe(0);
  });

  it('a daily snapshot for 0000-01-01 -> 422 invalid_payload at the edge, not a 500 from PostgreSQL', async () => {
    const r = await post(`${base()}/api/admin/daily-snapshot`, { shop: 'i12-daily.example', snapshot_date: '0000-01-01' }, ing());
    expectJsonError('0000-01-01', r, 422, { ok: false, error_kind: 'invalid_payload', error: 'snapshot_date 0000-01-01 is before 2000-01-01' });
  });

  it('D27: an unknown inventory line field -> 422 invalid_payload naming its path', async () => {
    const lines = [{ barcode: 'A', on_hand_qty: 1 }, { barcode: 'B', on_hand_qty: 1, avaliable_qty: 0 }];
    const r = await post(`${base()}/api/ingest/inventory-snapshot`, { shop: 'd27.example', source_system: 'pos', location_id: '0190a000-0000-7000-8000-0000000000a1', lines }, ing());
    expectJsonError('avaliable_qty', r, 422, { ok: false, error_kind: 'invalid_payload', error: 'lines[1].avaliable_qty is not allowed' });
  });
});

describe('D11: no error answer leaks internals', () => {
  it('no error body seen in this file contains a stack trace or SQL', () => {
    expect(errorAnswers.length).toBeGreaterThan(40);
    const leaking = errorAnswers.filter(({ r }) => leaksInternals(r.text)).map(({ what, r }) => `${what}: ${r.text}`);
    expect(leaking).toEqual([]);
    // Every error is either the spec's text `unauthorized` or JSON {ok:false, error}.
    for (const { what, r } of errorAnswers) {
      if (r.status === 401) expect(r.text, what).toBe('unauthorized');
      else expect(r.json, what).toMatchObject({ ok: false, error: expect.any(String) });
    }
  });
});

// Inputs that pass the HTTP schemas but that the command envelope or PostgreSQL cannot take. Own
// pipeline (and a short reply timeout): a command the projector cannot finish must not block the
// main pipeline of this file.
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

  it('a blank shop (whitespace only) -> 400 `shop required`, not a command that never completes', async () => {
    const r = await post(`${q.url()}/api/ingest/products`, { shop: '   ', products: [item('BLANK')] }, ing());
    seen('blank shop', r);
    expect.soft(r.status, r.text).toBe(400);
    expect.soft(r.json).toEqual({ ok: false, error: 'shop required' });
    const { rows } = await q.db.query<{ shop: string }>("SELECT shop FROM public.products WHERE btrim(shop) = ''");
    expect(rows, 'products stored under a blank shop').toEqual([]);
  });

  // PostgreSQL text cannot hold NUL: the gateway refuses such a body whole, with a clear 400, and nothing is written.
  it('a NUL character anywhere in the body is refused with 400 and changes nothing', async () => {
    const r = await finalAnswer(await post(`${q.url()}/api/ingest/products`, { shop: 'nul-item.example', products: [item('A\u0000B'), item('GOOD')] }, ing()));
    seen('NUL barcode', r);
    expect(r.status, r.text).toBe(400);
    expect(r.json).toEqual({ ok: false, error: 'invalid JSON body: strings must not contain NUL (\\u0000)' });
    const { rows } = await q.db.query('SELECT barcode FROM public.products WHERE shop = $1', ['nul-item.example']);
    expect(rows).toEqual([]);
  });

  it('a NUL character in the shop is refused (4xx ok:false) and does not stop the commands of other shops', async () => {
    const r = await finalAnswer(await post(`${q.url()}/api/ingest/products`, { shop: 'nul\u0000shop.example', products: [item('X')] }, ing()), 5_000);
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
