import { connect } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { readGatewayConfig } from '../runGateway.ts';
import {
  getAnswer,
  leaksInternals,
  postJson,
  startTestGateway,
  TEST_CRON_SECRET,
  TEST_INGEST_SECRET,
  useTestGateway,
  type HttpAnswer as Answer,
  type TestGateway,
} from '../../testing/testGateway.ts';

// The gateway's error catalog at the HTTP edge, on buildApp with in-memory ports (STYLE.md): spec
// Authentication / Errors / Removed interfaces, D8 (products auth), D9 (secret lists), D11 (status
// mapping), D12 (removed), hostile input. None of these rules needs Kafka
// or PostgreSQL to be shown: a refused request appends nothing, so nothing can be applied. The
// same answers through the real pipeline, one or two per path, stay in
// tests/integration/gateway-errors.int.test.ts.

const post = postJson;
const get = getAnswer;

const cron = (shop?: string, secret = TEST_CRON_SECRET): Record<string, string> => ({
  'x-cron-secret': secret,
  ...(shop === undefined ? {} : { 'x-shop': shop }),
});
const ing = (secret = TEST_INGEST_SECRET): Record<string, string> => ({ 'x-ingest-secret': secret });
const item = (barcode: string, extra: Record<string, unknown> = {}) => ({ barcode, product_name: `Product ${barcode}`, ...extra });

/** Every error answer seen in this file, for the "no stack trace, no SQL" rule (D11). */
const errorAnswers: { what: string; r: Answer }[] = [];

function seen(what: string, r: Answer): Answer {
  if (r.status >= 400) {
    errorAnswers.push({ what, r });
    expect(leaksInternals(r.text), `${what}: ${r.text}`).toBe(false);
  }
  return r;
}

function expectUnauthorized(what: string, r: Answer): void {
  seen(what, r);
  expect(r.status, what).toBe(401);
  expect(r.text, what).toBe('unauthorized');
  expect(r.headers.get('content-type') ?? '', what).toMatch(/^text\/plain/);
}

function expectJsonError(what: string, r: Answer, status: number, body: unknown): void {
  seen(what, r);
  expect(r.status, `${what}: ${r.text}`).toBe(status);
  expect(r.headers.get('content-type') ?? '', what).toMatch(/^application\/json/);
  expect(r.json, what).toEqual(body);
}

/** Accepted: the gateway appended the command (no projector answers here, so the answer is 202). */
function expectAccepted(what: string, r: Answer): void {
  expect(r.status, `${what}: ${r.text}`).toBe(202);
  expect(r.json, what).toMatchObject({ ok: true, status: 'accepted', command_id: expect.any(String) });
}

const shopsAppended = (gw: TestGateway): string[] => gw.appended.map((c) => c.shop);

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
      let text = rest.join('\r\n\r\n');
      if (/transfer-encoding:\s*chunked/i.test(head)) {
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

const gw = useTestGateway();

describe('D8: /api/products/bulk-upsert auth', () => {
  const body = { products: [item('D8')] };

  it('missing x-cron-secret -> 401 text `unauthorized`, nothing appended', async () => {
    expectUnauthorized('no cron secret', await post(`${gw.url}/api/products/bulk-upsert`, body, { 'x-shop': 'd8.example' }));
    expect(gw.appended).toEqual([]);
  });

  it('wrong x-cron-secret, the ingest secret as cron secret, the ingest header -> 401 text `unauthorized`, nothing appended', async () => {
    expectUnauthorized('wrong cron secret', await post(`${gw.url}/api/products/bulk-upsert`, body, cron('d8.example', 'nope')));
    // The ingest secret is not a cron secret.
    expectUnauthorized(
      'ingest secret as cron secret',
      await post(`${gw.url}/api/products/bulk-upsert`, body, cron('d8.example', TEST_INGEST_SECRET)),
    );
    expectUnauthorized(
      'ingest header on endpoint 1',
      await post(`${gw.url}/api/products/bulk-upsert`, body, { ...ing(), 'x-shop': 'd8.example' }),
    );
    expect(gw.appended).toEqual([]);
  });

  it('right secret but no x-shop, or a blank one -> 400 `x-shop header required`', async () => {
    expectJsonError('no x-shop', await post(`${gw.url}/api/products/bulk-upsert`, body, cron()), 400, {
      ok: false,
      error: 'x-shop header required',
    });
    expectJsonError('blank x-shop', await post(`${gw.url}/api/products/bulk-upsert`, body, cron('   ')), 400, {
      ok: false,
      error: 'x-shop header required',
    });
    expect(gw.appended).toEqual([]);
  });

  it('right secret and x-shop -> the command is appended for that shop (the control case)', async () => {
    expectAccepted('control', await post(`${gw.url}/api/products/bulk-upsert`, body, cron('d8.example')));
    expect(gw.appended).toMatchObject([
      { kind: 'products.upsert', shop: 'd8.example', payload: { response: 'bulk_upsert', items: [{ product: { barcode: 'D8' } }] } },
    ]);
  });
});

describe('spec Authentication rule 1: /api/ingest/products', () => {
  const body = { shop: 'auth1.example', products: [item('A1')] };

  it('missing x-ingest-secret, or cron credentials -> 401 text `unauthorized`, nothing appended', async () => {
    expectUnauthorized('no ingest secret', await post(`${gw.url}/api/ingest/products`, body));
    // The cron secret (and x-shop) does not open endpoint 2.
    expectUnauthorized('cron credentials on endpoint 2', await post(`${gw.url}/api/ingest/products`, body, cron('auth1.example')));
    expect(gw.appended).toEqual([]);
  });

  it('wrong, cron or empty x-ingest-secret -> 401 text `unauthorized`, nothing appended', async () => {
    expectUnauthorized('wrong ingest secret', await post(`${gw.url}/api/ingest/products`, body, ing('wrong')));
    expectUnauthorized('cron secret as ingest secret', await post(`${gw.url}/api/ingest/products`, body, ing(TEST_CRON_SECRET)));
    expectUnauthorized('empty ingest secret', await post(`${gw.url}/api/ingest/products`, body, ing('')));
    expect(gw.appended).toEqual([]);
  });
});

describe('rule 2 / D8: secrets not configured -> 503', () => {
  let nocfg: TestGateway;
  beforeAll(async () => {
    // As runGateway reads INGEST_SECRET='' and CRON_SECRET='' (see the D9 settings case below).
    nocfg = await startTestGateway({ ingestSecrets: [], cronSecrets: [] });
  });
  afterAll(async () => nocfg?.close());

  it('empty INGEST_SECRET and CRON_SECRET settings are no secrets at all', () => {
    expect(readGatewayConfig({ INGEST_SECRET: '', CRON_SECRET: '' })).toMatchObject({ ingestSecrets: [], cronSecrets: [] });
  });

  it('no INGEST_SECRET -> 503 `INGEST_SECRET not configured` on /api/ingest/products, with or without a header', async () => {
    const body = { shop: 'nocfg.example', products: [item('N1')] };
    const expected = { ok: false, error: 'INGEST_SECRET not configured' };
    expectJsonError('no header', await post(`${nocfg.url}/api/ingest/products`, body), 503, expected);
    expectJsonError('some header', await post(`${nocfg.url}/api/ingest/products`, body, ing()), 503, expected);
    expectJsonError('empty header', await post(`${nocfg.url}/api/ingest/products`, body, ing('')), 503, expected);
    expect(nocfg.appended).toEqual([]);
  });

  it('no CRON_SECRET -> 503 `CRON_SECRET not configured` on /api/products/bulk-upsert, with or without a header', async () => {
    const body = { products: [item('N2')] };
    const expected = { ok: false, error: 'CRON_SECRET not configured' };
    expectJsonError('no header', await post(`${nocfg.url}/api/products/bulk-upsert`, body, { 'x-shop': 'nocfg.example' }), 503, expected);
    expectJsonError('some header', await post(`${nocfg.url}/api/products/bulk-upsert`, body, cron('nocfg.example')), 503, expected);
    expectJsonError('empty header', await post(`${nocfg.url}/api/products/bulk-upsert`, body, cron('nocfg.example', '')), 503, expected);
    expect(nocfg.appended).toEqual([]);
  });
});

describe('D9: a comma-separated secret list', () => {
  let rotating: TestGateway;
  beforeAll(async () => {
    // The lists as runGateway reads them from its settings.
    const { ingestSecrets, cronSecrets } = readGatewayConfig({ INGEST_SECRET: 'old,new', CRON_SECRET: 'cron-a, cron-b' });
    rotating = await startTestGateway({ ingestSecrets, cronSecrets });
  });
  afterAll(async () => rotating?.close());
  beforeEach(() => {
    rotating.appended.length = 0;
  });
  const sendWith = (secret: string, barcode: string) =>
    post(`${rotating.url}/api/ingest/products`, { shop: 'd9.example', products: [item(barcode)] }, ing(secret));

  it('the settings are read as lists, the entries trimmed', () => {
    expect(readGatewayConfig({ INGEST_SECRET: 'old,new', CRON_SECRET: 'cron-a, cron-b' })).toMatchObject({
      ingestSecrets: ['old', 'new'],
      cronSecrets: ['cron-a', 'cron-b'],
    });
  });

  it('accepts every listed ingest secret', async () => {
    expectAccepted('old', await sendWith('old', 'OLD'));
    expectAccepted('new', await sendWith('new', 'NEW'));
    expect(
      rotating.appended.map((c) => (c.payload as { items: Array<{ product: { barcode: string } }> }).items[0]!.product.barcode),
    ).toEqual(['OLD', 'NEW']);
  });

  it('refuses a prefix, the whole list, empty, other case, and extra characters; the header is compared exactly', async () => {
    for (const secret of ['ol', 'old,new', 'old, new', '', 'OLD', 'newer', 'n ew', 'new,']) {
      expectUnauthorized(`secret ${JSON.stringify(secret)}`, await sendWith(secret, 'REFUSED'));
    }
    expect(rotating.appended).toEqual([]);
  });

  it('`new ` with a trailing space: HTTP strips the optional whitespace around a field value, so the value is `new` and is accepted', async () => {
    // RFC 9110 5.5: leading/trailing OWS is not part of the field value; fetch would strip it, so
    // the bytes are written on a raw socket. auth.ts compares the (parsed) value exactly.
    const body = JSON.stringify({ shop: 'd9-ows.example', products: [item('OWS')] });
    const r = await rawPost(rotating.port, '/api/ingest/products', ['x-ingest-secret: new   '], body);
    expect(r.status, r.body).toBe(202);
    // Whitespace inside the value is part of it.
    const inner = await rawPost(rotating.port, '/api/ingest/products', ['x-ingest-secret: ne w'], body);
    expect(inner.status).toBe(401);
    expect(inner.body).toBe('unauthorized');
    expect(shopsAppended(rotating)).toEqual(['d9-ows.example']);
  });

  it('a gateway with a single secret refuses the rotated ones', async () => {
    expectUnauthorized(
      'old on the default gateway',
      await post(`${gw.url}/api/ingest/products`, { shop: 'd9.example', products: [] }, ing('old')),
    );
  });

  it('the cron secret is a list too (entries trimmed)', async () => {
    for (const [secret, barcode] of [
      ['cron-a', 'CA'],
      ['cron-b', 'CB'],
    ] as const) {
      expectAccepted(
        secret,
        await post(`${rotating.url}/api/products/bulk-upsert`, { products: [item(barcode)] }, cron('d9-cron.example', secret)),
      );
    }
    expectUnauthorized(
      'cron list as one',
      await post(`${rotating.url}/api/products/bulk-upsert`, { products: [] }, cron('d9-cron.example', 'cron-a, cron-b')),
    );
    expect(shopsAppended(rotating)).toEqual(['d9-cron.example', 'd9-cron.example']);
  });
});

describe('D11: body and field errors', () => {
  const ingestUrl = () => `${gw.url}/api/ingest/products`;
  const bulkUrl = () => `${gw.url}/api/products/bulk-upsert`;
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
    const answers = [
      seen('ingest empty', await post(ingestUrl(), '', ing())),
      seen('bulk empty', await post(bulkUrl(), '', cron('d11.example'))),
    ];
    expect(answers.map((r) => [r.status, r.json])).toEqual([
      [400, invalid],
      [400, invalid],
    ]);
  });

  it('missing shop -> 400 `shop required`', async () => {
    expectJsonError('no shop', await post(ingestUrl(), { products: [item('S')] }, ing()), 400, { ok: false, error: 'shop required' });
    expectJsonError('empty shop', await post(ingestUrl(), { shop: '', products: [item('S')] }, ing()), 400, {
      ok: false,
      error: 'shop required',
    });
  });

  it('a blank shop (whitespace only) -> 400 `shop required`, not a command that never completes', async () => {
    expectJsonError('blank shop', await post(ingestUrl(), { shop: '   ', products: [item('BLANK')] }, ing()), 400, {
      ok: false,
      error: 'shop required',
    });
    expect(gw.appended).toEqual([]);
  });

  it('shop of the wrong type -> 400 `shop must be string`', async () => {
    expectJsonError('shop number', await post(ingestUrl(), { shop: 123, products: [item('S')] }, ing()), 400, {
      ok: false,
      error: 'shop must be string',
    });
  });

  it('missing products -> 400 `products required` (both endpoints)', async () => {
    expectJsonError('ingest no products', await post(ingestUrl(), { shop: 'd11.example' }, ing()), 400, {
      ok: false,
      error: 'products required',
    });
    expectJsonError('bulk no products', await post(bulkUrl(), {}, cron('d11.example')), 400, { ok: false, error: 'products required' });
  });

  it('products not an array -> 400 `products must be array` (both endpoints), nothing appended', async () => {
    expectJsonError('ingest object', await post(ingestUrl(), { shop: 'd11.example', products: { a: 1 } }, ing()), 400, {
      ok: false,
      error: 'products must be array',
    });
    expectJsonError('bulk string', await post(bulkUrl(), { products: 'B1' }, cron('d11.example')), 400, {
      ok: false,
      error: 'products must be array',
    });
    expect(gw.appended).toEqual([]);
  });

  it('10,001 products -> 400 naming the limit 10000 (both endpoints), nothing appended; 10,000 are accepted', async () => {
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
    expect(gw.appended).toEqual([]);
    // The limit itself is allowed (its 200 through the pipeline: gateway-errors.int.test.ts).
    expectAccepted('10,000 bulk', await post(bulkUrl(), { products: products.slice(0, 10_000) }, cron('d11-max.example')));
    expect((gw.appended[0]?.payload as { items: unknown[] }).items).toHaveLength(10_000);
  });

  it('an unknown route -> 404 JSON with ok:false; a known one with another method 405', async () => {
    for (const [what, r] of [
      ['POST /api/nope', await post(`${gw.url}/api/nope`, { a: 1 }, ing())],
      ['GET /nope', await get(`${gw.url}/nope`)],
      ['POST /api/ingest/unknown', await post(`${gw.url}/api/ingest/unknown`, {}, ing())],
    ] as const) {
      seen(what, r);
      expect(r.status, what).toBe(404);
      expect(r.headers.get('content-type') ?? '', what).toMatch(/^application\/json/);
      expect(r.json, what).toEqual({ ok: false, error: expect.any(String) });
    }
    // A known route asked with another method is 405 with Allow (RFC 9110 §15.5.6), in the same shape.
    const other = await get(`${gw.url}/api/ingest/products`, ing());
    seen('GET /api/ingest/products', other);
    expect([other.status, other.headers.get('allow'), other.json.ok]).toEqual([405, 'POST, OPTIONS', false]);
  });
});

describe('D11: body size limit', () => {
  let small: TestGateway;
  beforeAll(async () => {
    small = await startTestGateway({ bodyLimitBytes: readGatewayConfig({ BODY_LIMIT_BYTES: '2048' }).bodyLimitBytes });
  });
  afterAll(async () => small?.close());
  const products = Array.from({ length: 40 }, (_, i) => item(`BIG-${i}`, { brand: 'x'.repeat(60) }));

  it('a body over BODY_LIMIT_BYTES -> 413 JSON ok:false (both endpoints), nothing appended', async () => {
    const ingestBody = { shop: 'd11-413.example', products };
    expect(Buffer.byteLength(JSON.stringify(ingestBody))).toBeGreaterThan(4096);
    for (const [what, r] of [
      ['ingest', await post(`${small.url}/api/ingest/products`, ingestBody, ing())],
      ['bulk', await post(`${small.url}/api/products/bulk-upsert`, { products }, cron('d11-413.example'))],
    ] as const) {
      seen(what, r);
      expect(r.status, `${what}: ${r.text}`).toBe(413);
      expect(r.json).toEqual({ ok: false, error: expect.any(String) });
    }
    expect(small.appended).toEqual([]);
  });

  it('a body under the limit on the same gateway is accepted', async () => {
    expectAccepted('small', await post(`${small.url}/api/ingest/products`, { shop: 'd11-413.example', products: [item('SMALL')] }, ing()));
    expect(shopsAppended(small)).toEqual(['d11-413.example']);
  });

  it('an over-limit body with bad credentials is refused by auth first (401)', async () => {
    expectUnauthorized('413 vs 401', await post(`${small.url}/api/ingest/products`, { shop: 'x', products }, ing('wrong')));
  });
});

describe('D12: removed interfaces', () => {
  const removed = { ok: false, error: 'removed in v2' };

  it('POST /rest/v1/external_signals and /api/pixel-events -> 410 `removed in v2`, with and without credentials', async () => {
    for (const path of ['/rest/v1/external_signals', '/api/pixel-events']) {
      expectJsonError(`${path} no creds`, await post(`${gw.url}${path}`, { a: 1 }), 410, removed);
      expectJsonError(`${path} ingest`, await post(`${gw.url}${path}`, { a: 1 }, ing()), 410, removed);
      expectJsonError(`${path} cron`, await post(`${gw.url}${path}`, { a: 1 }, cron('d12.example')), 410, removed);
      expectJsonError(
        `${path} wrong`,
        await post(`${gw.url}${path}`, { a: 1 }, { ...ing('wrong'), 'x-cron-secret': 'wrong' }),
        410,
        removed,
      );
      expectJsonError(`${path} bad body`, await post(`${gw.url}${path}`, '{bad', ing()), 410, removed);
    }
  });
});

describe('auth before body', () => {
  it('a wrong secret with a malformed body -> 401, not 400 (both endpoints)', async () => {
    expectUnauthorized('ingest wrong + {bad', await post(`${gw.url}/api/ingest/products`, '{bad', ing('wrong')));
    expectUnauthorized('ingest none + {bad', await post(`${gw.url}/api/ingest/products`, '{bad'));
    expectUnauthorized('ingest wrong + array', await post(`${gw.url}/api/ingest/products`, '[]', ing('wrong')));
    expectUnauthorized('ingest wrong + missing shop', await post(`${gw.url}/api/ingest/products`, { products: 'x' }, ing('wrong')));
    expectUnauthorized('bulk wrong + {bad', await post(`${gw.url}/api/products/bulk-upsert`, '{bad', cron('a.example', 'wrong')));
    expectUnauthorized(
      'bulk wrong, no shop + {bad',
      await post(`${gw.url}/api/products/bulk-upsert`, '{bad', { 'x-cron-secret': 'wrong' }),
    );
  });
});

describe('GET /api/commands/{id}', () => {
  // PostgreSQL (in memory) knows no command: a real one, by shop, is gateway-errors.int.test.ts's.
  const unknownId = '0190a6e2-0000-7000-8000-000000000000';

  it('an unknown well-formed uuid -> 404 JSON ok:false (ingest secret, and cron secret with x-shop); a malformed id -> 404', async () => {
    for (const [what, headers] of [
      ['ingest', ing()],
      ['cron', cron('cmd.example')],
    ] as const) {
      const r = seen(what, await get(`${gw.url}/api/commands/${unknownId}`, headers));
      expect(r.status, what).toBe(404);
      expect(r.headers.get('content-type') ?? '').toMatch(/^application\/json/);
      expect(r.json, what).toEqual({ ok: false, error: expect.any(String) });
    }
    const bad = seen('malformed id', await get(`${gw.url}/api/commands/not-a-uuid`, ing()));
    expect(bad.status).toBe(404);
    expect(bad.json).toEqual({ ok: false, error: expect.any(String) });
  });

  it('no credentials or a wrong secret -> 401 text `unauthorized`', async () => {
    expectUnauthorized('no creds', await get(`${gw.url}/api/commands/${unknownId}`));
    expectUnauthorized('wrong ingest', await get(`${gw.url}/api/commands/${unknownId}`, ing('wrong')));
    expectUnauthorized('wrong cron', await get(`${gw.url}/api/commands/${unknownId}`, cron('cmd.example', 'wrong')));
    expectUnauthorized('x-shop alone', await get(`${gw.url}/api/commands/${unknownId}`, { 'x-shop': 'cmd.example' }));
  });

  it('cron secret without x-shop -> 400 `x-shop header required`', async () => {
    expectJsonError('cron no shop', await get(`${gw.url}/api/commands/${unknownId}`, cron()), 400, {
      ok: false,
      error: 'x-shop header required',
    });
  });
});

describe('hostile requests -> their 4xx in the spec shape, never a 500', () => {
  it('a malformed percent-encoding in a path -> 400 `malformed URL`', async () => {
    expectJsonError('GET %ZZ', await get(`${gw.url}/api/commands/%ZZ`, ing()), 400, { ok: false, error: 'malformed URL' });
  });

  it('Content-Encoding gzip or deflate with a body that is not compressed -> 400 `invalid compressed body`, nothing appended', async () => {
    for (const encoding of ['gzip', 'deflate']) {
      const body = JSON.stringify({ shop: 'i12-gzip.example', products: [item('GZ')] });
      expectJsonError(encoding, await post(`${gw.url}/api/ingest/products`, body, { ...ing(), 'content-encoding': encoding }), 400, {
        ok: false,
        error: 'invalid compressed body',
      });
    }
    expect(gw.appended).toEqual([]);
  });

  it('a daily snapshot for 0000-01-01 -> 422 invalid_payload at the edge, not a 500 from PostgreSQL', async () => {
    const r = await post(`${gw.url}/api/admin/daily-snapshot`, { shop: 'i12-daily.example', snapshot_date: '0000-01-01' }, ing());
    expectJsonError('0000-01-01', r, 422, {
      ok: false,
      error_kind: 'invalid_payload',
      error: 'snapshot_date 0000-01-01 is before 2000-01-01',
    });
  });

  it('D27: an unknown inventory line field -> 422 invalid_payload naming its path', async () => {
    const lines = [
      { barcode: 'A', on_hand_qty: 1 },
      { barcode: 'B', on_hand_qty: 1, avaliable_qty: 0 },
    ];
    const r = await post(
      `${gw.url}/api/ingest/inventory-snapshot`,
      { shop: 'd27.example', source_system: 'pos', location_id: '0190a000-0000-7000-8000-0000000000a1', lines },
      ing(),
    );
    expectJsonError('avaliable_qty', r, 422, { ok: false, error_kind: 'invalid_payload', error: 'lines[1].avaliable_qty is not allowed' });
  });

  // PostgreSQL text cannot hold NUL: the gateway refuses such a body whole, with a clear 400, and nothing is appended.
  it('a NUL character anywhere in the body (an item, the shop) is refused with 400 and nothing is appended', async () => {
    const nul = { ok: false, error: 'invalid JSON body: strings must not contain NUL (\\u0000)' };
    expectJsonError(
      'NUL barcode',
      await post(`${gw.url}/api/ingest/products`, { shop: 'nul-item.example', products: [item('A\u0000B'), item('GOOD')] }, ing()),
      400,
      nul,
    );
    expectJsonError(
      'NUL shop',
      await post(`${gw.url}/api/ingest/products`, { shop: 'nul\u0000shop.example', products: [item('X')] }, ing()),
      400,
      nul,
    );
    expect(gw.appended).toEqual([]);
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
