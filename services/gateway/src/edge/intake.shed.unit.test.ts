import { request, Agent } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import type { GatewayConfig } from '../config.ts';
import { SHED_MAX_BODY_BYTES } from './intake.ts';
import { startTestGateway, TEST_INGEST_SECRET, type TestGateway } from '../../testing/testGateway.ts';

// Fair admission per shop: while a shop is being refused, its plain writes are answered 429 on
// their raw bodies before the app (intake.ts, shedShop). The answer must be the app's own, and every
// body it reads and does not refuse must reach the app whole.
const gateways: TestGateway[] = [];
afterEach(async () => {
  await Promise.all(gateways.splice(0).map((g) => g.close()));
});

async function start(config: Partial<GatewayConfig>): Promise<TestGateway> {
  const gw = await startTestGateway(config);
  gateways.push(gw);
  return gw;
}

const products = (shop: string, n = 1) =>
  JSON.stringify({ shop, products: Array.from({ length: n }, (_, i) => ({ barcode: `B${i}`, product_name: `N${i}` })) });

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  reusedSocket: boolean;
}

/** A POST whose body is written in `pieces`, `gapMs` apart (a body that arrives in several reads). */
function send(
  gw: TestGateway,
  path: string,
  body: string,
  opts: { pieces?: number; gapMs?: number; agent?: Agent; headers?: Record<string, string> } = {},
) {
  const { port } = new URL(gw.url);
  return new Promise<Answer>((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path,
        ...(opts.agent ? { agent: opts.agent } : {}),
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          'x-ingest-secret': TEST_INGEST_SECRET,
          'x-request-id': 'req-1',
          ...opts.headers,
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text, reusedSocket: req.reusedSocket }));
      },
    );
    req.on('error', reject);
    const bytes = Buffer.from(body);
    const pieces = opts.pieces ?? 1;
    const size = Math.ceil(bytes.length / pieces);
    void (async () => {
      for (let i = 0; i < pieces; i++) {
        req.write(bytes.subarray(i * size, (i + 1) * size));
        if (i < pieces - 1) await new Promise((r) => setTimeout(r, opts.gapMs ?? 20));
      }
      req.end();
    })();
  });
}

async function shed(gw: TestGateway): Promise<number> {
  const text = await (await fetch(`${gw.url}/metrics`)).text();
  return Number(/^http_requests_shed_total (\d+)/m.exec(text)?.[1] ?? 0);
}

const comparable = (a: Answer) => {
  const { date: _date, 'keep-alive': _ka, connection: _c, ...headers } = a.headers;
  return { status: a.status, headers, body: a.body };
};

describe('shedding a shop over budget before the app', () => {
  it('answers exactly what the app answers: status, body, headers (request id, Retry-After, error code, safe headers), metrics', async () => {
    const gw = await start({ shopRateLinesPerS: 1, shopBurstLines: 1 });
    expect((await send(gw, '/api/ingest/products', products('noisy.example', 5))).status).toBe(202);
    // Through the app: the trailing slash routes the same, and is no path the shedder takes.
    const viaApp = await send(gw, '/api/ingest/products/', products('noisy.example'));
    expect(await shed(gw)).toBe(0);
    // A refusal just happened: the shedder is armed.
    const viaShed = await send(gw, '/api/ingest/products', products('noisy.example'));
    expect(await shed(gw)).toBe(1);
    expect(viaShed.status).toBe(429);
    expect(comparable(viaShed)).toEqual(comparable(viaApp));
    expect(viaShed.headers['x-request-id']).toBe('req-1');
    expect(viaShed.headers['x-error-code']).toBe('shop_over_budget');
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    expect(metrics).toMatch(/^http_requests_total\{method="POST",route="\/api\/ingest\/products",status="429"\} 2$/m);
    expect(gw.appended.map((c) => c.shop)).toEqual(['noisy.example']);
  });

  it('hands every body it does not refuse to the app whole, in one read or several: another shop, and an unsure body of the refused one', async () => {
    const gw = await start({ shopRateLinesPerS: 1, shopBurstLines: 1 });
    expect((await send(gw, '/api/ingest/products', products('noisy.example', 5))).status).toBe(202);
    expect((await send(gw, '/api/ingest/products', products('noisy.example'))).status).toBe(429);
    // Armed; another shop's body in three reads is read early, not refused, and applied whole.
    const quiet = await send(gw, '/api/ingest/products', products('quiet.example', 300), { pieces: 3 });
    expect(quiet.status).toBe(202);
    // The refused shop named first, then another shop (JSON.parse keeps the last): unsure on the bytes, parsed by the app.
    const twice = `{"shop":"noisy.example","shop":"fresh.example","products":[{"barcode":"B","product_name":"N"}]}`;
    expect((await send(gw, '/api/ingest/products', twice, { pieces: 2 })).status).toBe(202);
    // A broken body of another shop: handed on, and the app answers 400 as ever.
    expect((await send(gw, '/api/ingest/products', '{"shop":"other.example","products":[{"barcode":')).status).toBe(400);
    expect(gw.appended.map((c) => [c.shop, (c.payload as { items: unknown[] }).items.length])).toEqual([
      ['noisy.example', 5],
      ['quiet.example', 300],
      ['fresh.example', 1],
    ]);
    // The over-budget shop's body in several reads is refused before the app.
    expect((await send(gw, '/api/ingest/products', products('noisy.example', 50), { pieces: 3 })).status).toBe(429);
    expect(await shed(gw)).toBe(1);
  });

  it('keeps the connection: refused requests one after another on one keep-alive socket', async () => {
    const gw = await start({ shopRateLinesPerS: 1, shopBurstLines: 1 });
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      expect((await send(gw, '/api/ingest/products', products('noisy.example', 5), { agent })).status).toBe(202);
      const answers = [];
      for (let i = 0; i < 4; i++) answers.push(await send(gw, '/api/ingest/products', products('noisy.example'), { agent }));
      expect(answers.map((a) => a.status)).toEqual([429, 429, 429, 429]);
      expect(answers.every((a) => a.reusedSocket)).toBe(true);
      expect(await shed(gw)).toBe(3);
    } finally {
      agent.destroy();
    }
  });

  it('leaves to the app what it must judge first: no credentials (401), an Idempotency-Key, a body over the limit (413), a compressed body', async () => {
    const gw = await start({ shopRateLinesPerS: 1, shopBurstLines: 1, bodyLimitBytes: 2_000 });
    expect((await send(gw, '/api/ingest/products', products('noisy.example', 5))).status).toBe(202);
    expect((await send(gw, '/api/ingest/products', products('noisy.example'))).status).toBe(429);
    expect((await send(gw, '/api/ingest/products', products('noisy.example'), { headers: { 'x-ingest-secret': 'wrong' } })).status).toBe(
      401,
    );
    expect((await send(gw, '/api/ingest/products', products('noisy.example'), { headers: { 'idempotency-key': 'k-1' } })).status).toBe(429);
    expect((await send(gw, '/api/ingest/products', products('noisy.example', 100))).status).toBe(413);
    expect(await shed(gw)).toBe(0);
  });

  it('reads early only small bodies (not yet in the in-flight budget): a larger one is refused by the app on its raw bytes', async () => {
    const gw = await start({ shopRateLinesPerS: 1, shopBurstLines: 1 });
    expect((await send(gw, '/api/ingest/products', products('noisy.example', 5))).status).toBe(202);
    expect((await send(gw, '/api/ingest/products', products('noisy.example'))).status).toBe(429);
    const large = products('noisy.example', 3_000);
    expect(Buffer.byteLength(large)).toBeGreaterThan(SHED_MAX_BODY_BYTES);
    expect((await send(gw, '/api/ingest/products', large)).status).toBe(429);
    expect(await shed(gw)).toBe(0);
    expect((await send(gw, '/api/ingest/products', products('noisy.example'))).status).toBe(429);
    expect(await shed(gw)).toBe(1);
  });
});
