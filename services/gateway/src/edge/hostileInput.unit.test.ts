import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '@ingest/runtime/testing';
import { errorHandler } from '../errors/catalog.ts';
import { startTestGateway, TEST_INGEST_SECRET, type TestGateway } from '../../testing/testGateway.ts';

// Hostile input at the HTTP edge, built with buildApp and in-memory ports: no 5xx for anything
// a client can send, nothing accepted that PostgreSQL would refuse, no lockout of other clients
// through the in-flight budget (D13), and bounded metric labels.
const gateways: TestGateway[] = [];
afterEach(async () => {
  await Promise.all(gateways.splice(0).map((g) => g.close()));
});
async function start(config: Parameters<typeof startTestGateway>[0] = {}): Promise<TestGateway> {
  const gw = await startTestGateway(config);
  gateways.push(gw);
  return gw;
}

const auth = { 'x-ingest-secret': TEST_INGEST_SECRET };
const products = { shop: 'a.example', products: [{ barcode: 'B1', product_name: 'Tea' }] };

async function call(url: string, init: RequestInit = {}) {
  const r = await fetch(url, init);
  const text = await r.text();
  return { status: r.status, text, json: text.startsWith('{') ? (JSON.parse(text) as unknown) : null, headers: r.headers };
}

interface RawAnswer {
  status: number;
  text: string;
  headers: string;
}

/**
 * One raw HTTP/1.1 request head (and as much body as given), so any Content-Length can be
 * declared. `answer` resolves as soon as a whole response (Content-Length framed) has arrived,
 * `closed` once the server has closed the connection.
 */
function rawRequest(port: number, head: string[], body = ''): { answer: Promise<RawAnswer>; closed: Promise<void>; destroy(): void } {
  const s = connect(port, '127.0.0.1');
  let data = '';
  s.setEncoding('utf8');
  const answer = new Promise<RawAnswer>((resolve, reject) => {
    s.on('data', (c: string) => {
      data += c;
      const end = data.indexOf('\r\n\r\n');
      if (end < 0) return;
      const headers = data.slice(0, end);
      const text = data.slice(end + 4);
      if (Buffer.byteLength(text) < Number(/content-length: (\d+)/i.exec(headers)?.[1] ?? 0)) return;
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(headers)?.[1] ?? 0), text, headers });
    });
    s.on('error', reject);
  });
  const closed = new Promise<void>((resolve) => s.on('close', () => resolve()));
  s.write([...head, '', body].join('\r\n'));
  return { answer, closed, destroy: () => s.destroy() };
}

describe('a daily-snapshot date PostgreSQL cannot store, or absurdly old, is refused at the edge', () => {
  it.each(['0000-01-01', '0001-01-01', '1999-12-31'])('snapshot_date %s -> 422 invalid_payload, nothing appended', async (date) => {
    const gw = await start();
    const r = await call(`${gw.url}/api/admin/daily-snapshot`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ shop: 'a.example', snapshot_date: date }),
    });
    expect(r.status).toBe(422);
    expect(r.json).toEqual({ ok: false, error_kind: 'invalid_payload', error: `snapshot_date ${date} is before 2000-01-01` });
    expect(gw.appended).toEqual([]);
  });

  it('the lower bound itself, 2000-01-01, is accepted', async () => {
    const gw = await start();
    const r = await call(`${gw.url}/api/admin/daily-snapshot`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ shop: 'a.example', snapshot_date: '2000-01-01' }),
    });
    expect(r.status).toBe(202);
    expect(gw.appended.map((c) => c.payload)).toEqual([{ snapshot_date: '2000-01-01' }]);
  });
});

describe('a body that is not valid compressed data -> 400, not 500', () => {
  it.each(['gzip', 'deflate', 'br'])('Content-Encoding: %s with garbage -> 400 `invalid compressed body`', async (encoding) => {
    const gw = await start();
    const r = await call(`${gw.url}/api/ingest/products`, {
      method: 'POST',
      headers: { ...auth, 'content-encoding': encoding },
      body: 'this is not compressed',
    });
    expect(r.status).toBe(400);
    expect(r.json).toEqual({ ok: false, error: 'invalid compressed body' });
    expect(gw.appended).toEqual([]);
  });

  it('truncated gzip -> 400 `invalid compressed body`', async () => {
    const gw = await start();
    const body = gzipSync(JSON.stringify(products)).subarray(0, 12);
    const r = await call(`${gw.url}/api/ingest/products`, { method: 'POST', headers: { ...auth, 'content-encoding': 'gzip' }, body });
    expect(r.status).toBe(400);
    expect(r.json).toEqual({ ok: false, error: 'invalid compressed body' });
  });

  it('control: a valid gzip body is accepted', async () => {
    const gw = await start();
    const r = await call(`${gw.url}/api/ingest/products`, {
      method: 'POST',
      headers: { ...auth, 'content-encoding': 'gzip' },
      body: gzipSync(JSON.stringify(products)),
    });
    expect(r.status).toBe(202);
    expect(gw.appended).toHaveLength(1);
  });
});

describe('malformed percent-encoding in a path -> 400 `malformed URL`, not 500', () => {
  it('GET /api/commands/%ZZ, with or without credentials', async () => {
    const gw = await start();
    for (const headers of [auth, {}]) {
      const r = await call(`${gw.url}/api/commands/%ZZ`, { headers });
      expect(r.status).toBe(400);
      expect(r.json).toEqual({ ok: false, error: 'malformed URL' });
      expect(r.text).not.toContain('%ZZ');
    }
  });
});

describe('any other 4xx of the HTTP stack keeps its status, in the spec shape', () => {
  it('an error with status 4xx and no mapping of its own -> that status, a fixed text (the message is not echoed)', async () => {
    const app = express();
    app.get('/size', () => {
      throw Object.assign(new Error('request size did not match content length'), { status: 400, type: 'request.size.invalid' });
    });
    app.get('/length', () => {
      throw Object.assign(new Error('secret detail'), { statusCode: 411 });
    });
    app.get('/boom', () => {
      throw Object.assign(new Error('secret detail'), { status: 503 });
    });
    app.use(errorHandler(silentLogger()));
    const server = app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    try {
      expect(await call(`${base}/size`)).toMatchObject({ status: 400, json: { ok: false, error: 'bad request' } });
      expect(await call(`${base}/length`)).toMatchObject({ status: 411, json: { ok: false, error: 'length required' } });
      // Not a client error: the one 500, detail in the log only.
      expect(await call(`${base}/boom`)).toMatchObject({ status: 500, json: { ok: false, error: 'internal error' } });
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});

describe('a declared size over the limit is refused at once; authentication comes before admission', () => {
  const config = { bodyLimitBytes: 10_000, maxInflightBytes: 1_000 };
  const head = (port: number, length: number | string, headers: string[] = [`x-ingest-secret: ${TEST_INGEST_SECRET}`]) => [
    'POST /api/ingest/products HTTP/1.1',
    `Host: 127.0.0.1:${port}`,
    'Content-Type: application/json',
    `Content-Length: ${length}`,
    ...headers,
  ];

  it('Content-Length: 10 GiB and no body -> 413 at once (nothing read), and the connection is closed', async () => {
    const gw = await start(config);
    const started = performance.now();
    const hostile = rawRequest(gw.port, head(gw.port, 10 * 1024 ** 3));
    const r = await hostile.answer;
    expect(r.status).toBe(413);
    expect(JSON.parse(r.text)).toEqual({ ok: false, error: 'request body too large' });
    expect(r.headers).toMatch(/^connection: close$/im);
    await hostile.closed;
    expect(performance.now() - started).toBeLessThan(2_000);
    // Others are not locked out.
    expect((await call(`${gw.url}/api/ingest/products`, { method: 'POST', headers: auth, body: JSON.stringify(products) })).status).toBe(
      202,
    );
  });

  it('the same declared 10 GiB without credentials -> 401 (credentials are checked first)', async () => {
    const gw = await start(config);
    const hostile = rawRequest(gw.port, head(gw.port, 10 * 1024 ** 3, []));
    try {
      const r = await hostile.answer;
      expect(r.status).toBe(401);
      expect(r.text).toBe('unauthorized');
    } finally {
      hostile.destroy();
    }
  });

  it('while slow clients hold the in-flight budget: an unauthenticated request gets 401, never 429; an authenticated one gets 429 with Retry-After (D13)', async () => {
    const gw = await start(config);
    // The budget counts bytes received, and one connection holds at most a quarter of it: four
    // connections each send 240 of their declared 250 bytes and stop, 960 of the 1,000 bytes.
    const slow = Array.from({ length: 4 }, () =>
      rawRequest(gw.port, head(gw.port, 250), `{"shop":"a.example","products":[],"x":"${'x'.repeat(240 - 40)}`),
    );
    try {
      await new Promise((r) => setTimeout(r, 200));
      const body = JSON.stringify({ ...products, products: [{ barcode: 'B'.repeat(60), product_name: 'N'.repeat(60) }] });
      expect(body.length).toBeGreaterThan(100);
      const anonymous = await call(`${gw.url}/api/ingest/products`, { method: 'POST', body });
      expect(anonymous.status).toBe(401);
      const wrong = await call(`${gw.url}/api/ingest/products`, { method: 'POST', headers: { 'x-ingest-secret': 'wrong' }, body });
      expect(wrong.status).toBe(401);
      const authed = await call(`${gw.url}/api/ingest/products`, { method: 'POST', headers: auth, body });
      expect(authed.status).toBe(429);
      expect(authed.headers.get('retry-after')).toBe('1');
      expect(authed.json).toEqual({ ok: false, error: 'too many requests in flight; retry later' });
    } finally {
      for (const s of slow) s.destroy();
    }
  });
});

describe('the metrics label `route` is the matched route pattern or `unmatched`', () => {
  it('hostile URLs add no series: automatic OPTIONS answers, malformed URLs and 404s share `unmatched`', async () => {
    const gw = await start();
    await call(`${gw.url}/api/hostile-options-a1b2`, { method: 'OPTIONS' });
    await call(`${gw.url}/api/ingest/products?x=hostile-query`, { method: 'OPTIONS' });
    await call(`${gw.url}/api/commands/%ZZhostile`);
    await call(`${gw.url}/hostile-404-c3d4`);
    await call(`${gw.url}/api/ingest/products`, { method: 'POST', headers: auth, body: JSON.stringify(products) });
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    const routes = new Set([...metrics.matchAll(/^http_requests_total\{[^}]*route="([^"]*)"/gm)].map((m) => m[1]));
    expect([...routes].sort()).toEqual(['/api/ingest/products', 'unmatched']);
    expect(metrics).not.toMatch(/hostile/);
  });
});
