import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { GatewayConfig } from '../config.ts';
import { startTestGateway, TEST_INGEST_SECRET, type TestGateway } from '../../testing/testGateway.ts';

// Admission that cannot be abused (D13, docs/api.md#admission), at the buildApp tier: the in-flight
// budget counts the bytes actually received, one connection holds at most a quarter of it, and a
// body that arrives too slowly is cut with 408 after BODY_TIMEOUT; other clients keep their
// latency.
const gateways: TestGateway[] = [];
const sockets: Array<{ destroy(): void }> = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await Promise.all(gateways.splice(0).map((g) => g.close()));
});
async function start(config: Partial<GatewayConfig>): Promise<TestGateway> {
  const gw = await startTestGateway(config);
  gateways.push(gw);
  return gw;
}

interface Hostile {
  /** The status line's code once an answer arrived, and the whole text received. */
  answer: Promise<{ status: number; text: string; at: number }>;
  closed: Promise<number>;
  write(text: string): void;
}

/**
 * A raw connection: the request head, then `first`, then one byte every `everyMs` until the server
 * answers or closes (never when `everyMs` is 0). Times are ms since the request began.
 */
function hostile(port: number, lines: string[], first = '', everyMs = 0): Hostile {
  const started = performance.now();
  const s = connect(port, '127.0.0.1');
  sockets.push(s);
  let data = '';
  let timer: NodeJS.Timeout | undefined;
  const answer = new Promise<{ status: number; text: string; at: number }>((resolve) => {
    s.on('data', (c: Buffer) => {
      data += c.toString('utf8');
      if (data.includes('\r\n\r\n'))
        resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(data)?.[1] ?? 0), text: data, at: performance.now() - started });
    });
  });
  const closed = new Promise<number>((resolve) =>
    s.on('close', () => {
      clearInterval(timer);
      resolve(performance.now() - started);
    }),
  );
  s.on('error', () => {});
  s.write(
    [
      `POST /api/ingest/products HTTP/1.1`,
      'Host: 127.0.0.1',
      'Content-Type: application/json',
      `x-ingest-secret: ${TEST_INGEST_SECRET}`,
      ...lines,
      '',
      first,
    ].join('\r\n'),
  );
  if (everyMs > 0)
    timer = setInterval(() => s.writable && s.write(lines.includes('Transfer-Encoding: chunked') ? '1\r\n \r\n' : ' '), everyMs);
  return { answer, closed, write: (text) => void s.write(text) };
}

const auth = { 'x-ingest-secret': TEST_INGEST_SECRET, 'content-type': 'application/json', prefer: 'respond-async' };
const small = JSON.stringify({ shop: 'a.example', products: [{ barcode: 'B1', product_name: 'Tea' }] });
async function legit(gw: TestGateway, body = small): Promise<{ status: number; ms: number }> {
  const started = performance.now();
  const r = await fetch(`${gw.url}/api/ingest/products`, { method: 'POST', headers: auth, body });
  await r.text();
  return { status: r.status, ms: performance.now() - started };
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

describe('the in-flight budget counts bytes actually received, at most a quarter per connection', () => {
  const config = { bodyLimitBytes: 10_000, maxInflightBytes: 1_000 };

  it('chunked bodies (no Content-Length) count as they arrive: four connections holding 960 bytes make a 150-byte request 429', async () => {
    const gw = await start(config);
    for (let i = 0; i < 4; i++) hostile(gw.port, ['Transfer-Encoding: chunked'], `f0\r\n${'x'.repeat(240)}\r\n`);
    await new Promise((r) => setTimeout(r, 200));
    const r = await legit(gw, JSON.stringify({ shop: 'a.example', products: [{ barcode: 'B'.repeat(50), product_name: 'N'.repeat(50) }] }));
    expect(r.status).toBe(429);
    expect(gw.appended).toEqual([]);
  });

  it('one connection cannot hold more than its share: a chunked body past 250 of the 1,000 bytes -> 413 at once, connection closed', async () => {
    const gw = await start(config);
    const h = hostile(gw.port, ['Transfer-Encoding: chunked'], `12c\r\n${'x'.repeat(300)}\r\n`);
    const a = await h.answer;
    expect(a.status).toBe(413);
    expect(a.text).toMatch(/\{"ok":false,"error":"request body too large"\}$/);
    await h.closed;
    expect((await legit(gw)).status).toBe(202);
  });

  it('a declared body over the share -> 413 before a byte is read', async () => {
    const gw = await start(config);
    const h = hostile(gw.port, ['Content-Length: 300']);
    expect((await h.answer).status).toBe(413);
    await h.closed;
  });

  it('what a connection held is released when it is cut: the budget is whole again', async () => {
    const gw = await start({ ...config, bodyTimeoutMs: 300 });
    const held = Array.from({ length: 4 }, () => hostile(gw.port, ['Content-Length: 250'], 'x'.repeat(240)));
    await new Promise((r) => setTimeout(r, 100));
    expect(
      (await legit(gw, JSON.stringify({ shop: 'a.example', products: [{ barcode: 'B'.repeat(50), product_name: 'N'.repeat(50) }] })))
        .status,
    ).toBe(429);
    await Promise.all(held.map((h) => h.closed));
    expect(
      (await legit(gw, JSON.stringify({ shop: 'a.example', products: [{ barcode: 'B'.repeat(50), product_name: 'N'.repeat(50) }] })))
        .status,
    ).toBe(202);
  });
});

describe('a body that arrives too slowly is cut with 408 after BODY_TIMEOUT', () => {
  it('a trickling client gets 408 `request body timeout` after the deadline, and its connection is closed; nothing is appended', async () => {
    const gw = await start({ bodyTimeoutMs: 500 });
    const h = hostile(gw.port, ['Content-Length: 200'], '{"shop":', 50);
    const a = await h.answer;
    expect(a.status).toBe(408);
    expect(a.text).toMatch(/^connection: close$/im);
    expect(a.text).toMatch(/\{"ok":false,"error":"request body timeout"\}$/);
    expect(a.at).toBeGreaterThanOrEqual(450);
    expect(a.at).toBeLessThan(5_000);
    await h.closed;
    expect(gw.appended).toEqual([]);
  });

  it('a slow body that is complete within the deadline is answered as usual', async () => {
    const gw = await start({ bodyTimeoutMs: 1_000 });
    const h = hostile(gw.port, [`Content-Length: ${small.length}`], small.slice(0, 10));
    await new Promise((r) => setTimeout(r, 300));
    h.write(small.slice(10));
    const a = await h.answer;
    expect(a.status).toBe(202);
    expect(gw.appended).toHaveLength(1);
  });
});

describe('others keep their latency while hostile connections declare 10 GiB, 32 MiB or nothing and trickle bytes', () => {
  it('every other request is answered (202) about as fast as before, and the hostile ones are cut', async () => {
    // The defaults (512 MiB budget, 32 MiB bodies), with a short BODY_TIMEOUT to keep the test short.
    const gw = await start({ bodyTimeoutMs: 1_500 });
    const before: number[] = [];
    for (let i = 0; i < 15; i++) before.push((await legit(gw)).ms);

    const huge = hostile(gw.port, [`Content-Length: ${10 * 1024 ** 3}`], '{', 20);
    // 20 connections declaring 32 MiB each used to reserve 640 MiB of the 512 MiB budget: a lockout.
    const declared = Array.from({ length: 20 }, () => hostile(gw.port, [`Content-Length: ${32 * 1024 * 1024}`], '{', 20));
    const chunked = Array.from({ length: 5 }, () => hostile(gw.port, ['Transfer-Encoding: chunked'], '1\r\n{\r\n', 20));
    await new Promise((r) => setTimeout(r, 100));

    const during: Array<{ status: number; ms: number }> = [];
    for (let i = 0; i < 15; i++) during.push(await legit(gw));
    expect(during.map((d) => d.status)).toEqual(Array(15).fill(202));
    const [b, d] = [median(before), median(during.map((x) => x.ms))];
    expect(d, `median ${d.toFixed(1)} ms during the attack, ${b.toFixed(1)} ms before`).toBeLessThan(b * 4 + 100);

    expect((await huge.answer).status).toBe(413);
    for (const h of [...declared, ...chunked]) expect((await h.answer).status).toBe(408);
    await Promise.all([huge, ...declared, ...chunked].map((h) => h.closed));
    expect(gw.appended).toHaveLength(30);
  });
});
