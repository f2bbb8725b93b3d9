import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SchemaRegistry } from '@ingest/contracts';
import type { Pool } from '@ingest/db';
import { createRegistry, type Registry } from '@ingest/runtime';
import { silentLogger } from '@ingest/runtime/testing';
import { buildApp } from '../app.ts';
import { answerClientError } from './clientError.ts';
import { DEFAULT_GATEWAY_CONFIG } from '../config.ts';

// Hostile HTTP at the buildApp tier, on a server wired like runGateway.ts (its 'clientError'
// handler): every class of error the HTTP stack can raise, fired at every route, is its 4xx in
// the spec's shape and never a 5xx, and every answer carries the safe headers.
const LIMIT = 4096;
let server: Server;
let port: number;
let registry: Registry;
const appended: unknown[] = [];

beforeAll(async () => {
  registry = createRegistry();
  const app = buildApp({
    config: {
      ...DEFAULT_GATEWAY_CONFIG,
      ingestSecrets: ['s'],
      cronSecrets: ['c'],
      replyTimeoutMs: 10,
      bodyLimitBytes: LIMIT,
      bodyTimeoutMs: 300,
    },
    schemas: new SchemaRegistry(),
    commandLog: { appendCommand: async (c) => void appended.push(c) },
    replies: { register: () => ({ wait: async () => null, cancel: () => {} }), close: async () => {} },
    dryRunner: { run: () => Promise.reject(new Error('no dry runs here')) },
    pool: { query: async () => ({ rows: [], rowCount: 0 }) } as unknown as Pool,
    log: silentLogger(),
    registry,
  });
  server = createServer(app);
  server.on('clientError', answerClientError);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * Writes `parts` on a fresh connection (with `gapMs` between them), then reads until the server
 * closes it. With `abort`, the client goes away after the last part and no answer is read.
 */
function exchange(parts: Array<string | Buffer>, opts: { gapMs?: number; abort?: boolean } = {}): Promise<Answer | null> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(guard);
      s.destroy();
      resolve(parse(Buffer.concat(chunks)));
    };
    const guard = setTimeout(finish, 5_000);
    s.on('data', (c: Buffer) => chunks.push(c));
    s.on('close', finish);
    s.on('error', () => {});
    void (async () => {
      for (const [i, p] of parts.entries()) {
        if (i > 0 && opts.gapMs) await new Promise((r) => setTimeout(r, opts.gapMs));
        if (s.destroyed) return;
        s.write(p);
      }
      if (opts.abort) {
        await new Promise((r) => setTimeout(r, 20));
        done = true;
        clearTimeout(guard);
        s.destroy();
        resolve(null);
      }
    })();
  });
}

function parse(raw: Buffer): Answer | null {
  const text = raw.toString('utf8');
  const end = text.indexOf('\r\n\r\n');
  if (end < 0) return null;
  const [statusLine = '', ...lines] = text.slice(0, end).split('\r\n');
  const headers: Record<string, string> = {};
  for (const l of lines) {
    const i = l.indexOf(':');
    headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
  }
  let body = text.slice(end + 4);
  if (headers['transfer-encoding'] === 'chunked') {
    let out = '';
    for (;;) {
      const nl = body.indexOf('\r\n');
      const size = parseInt(body.slice(0, nl), 16);
      if (!size) break;
      out += body.slice(nl + 2, nl + 2 + size);
      body = body.slice(nl + 2 + size + 2);
    }
    body = out;
  }
  return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine)?.[1] ?? 0), headers, body };
}

const WRITES: Array<{ path: string; auth: string[] }> = [
  { path: '/api/products/bulk-upsert', auth: ['x-cron-secret: c', 'x-shop: a.example'] },
  ...['/api/ingest/products', '/api/ingest/inventory-snapshot', '/api/ingest/inventory-available', '/api/inventory-levels/bulk-upsert']
    .concat(['/api/order-line-master/bulk-upsert', '/api/admin/locations', '/api/admin/channels', '/api/admin/daily-snapshot'])
    .map((path) => ({ path, auth: ['x-ingest-secret: s'] })),
  ...['/rest/v1/external_signals', '/api/pixel-events'].map((path) => ({ path, auth: [] })),
];
const READS = ['/api/commands/0190a6e2-0000-7000-8000-000000000000', '/healthz', '/readyz', '/metrics', '/api/nope'];

const head = (method: string, path: string, lines: string[]) =>
  [`${method} ${path} HTTP/1.1`, 'Host: 127.0.0.1', 'Connection: close', ...lines, '', ''].join('\r\n');
const post = (path: string, auth: string[], lines: string[], body: string | Buffer = '') =>
  Buffer.concat([Buffer.from(head('POST', path, [...auth, ...lines])), Buffer.isBuffer(body) ? body : Buffer.from(body)]);
const withLength = (path: string, auth: string[], body: string | Buffer, lines: string[] = ['Content-Type: application/json']) =>
  post(path, auth, [...lines, `Content-Length: ${Buffer.byteLength(body)}`], body);
const chunk = (s: string) => `${Buffer.byteLength(s).toString(16)}\r\n${s}\r\n`;
const deep = `{"shop":"a.example","x":${'['.repeat(50_000)}${']'.repeat(50_000)}}`;

/** Each class of hostile input, as it is sent to a write route; `null`: the client goes away. */
const CLASSES: Array<{ name: string; send: (path: string, auth: string[]) => Promise<Answer | null>; expect: number[] }> = [
  { name: 'invalid JSON', send: (p, a) => exchange([withLength(p, a, '{"shop":')]), expect: [400] },
  { name: 'empty body', send: (p, a) => exchange([withLength(p, a, '')]), expect: [400] },
  { name: 'root not an object', send: (p, a) => exchange([withLength(p, a, '[1,2]')]), expect: [400] },
  {
    name: 'prototype keys',
    send: (p, a) => exchange([withLength(p, a, '{"__proto__":{"ok":true},"constructor":{"prototype":1}}')]),
    expect: [400],
  },
  { name: 'deep nesting', send: (p, a) => exchange([withLength(p, a, deep)]), expect: [400, 413] },
  { name: 'NUL and a lone surrogate', send: (p, a) => exchange([withLength(p, a, '{"shop":"a\\u0000","x":"\\ud800"}')]), expect: [400] },
  {
    name: 'declared 10 GiB',
    send: (p, a) => exchange([post(p, a, ['Content-Type: application/json', `Content-Length: ${10 * 1024 ** 3}`])]),
    expect: [413],
  },
  {
    name: 'chunked over the limit',
    send: (p, a) => exchange([post(p, a, ['Transfer-Encoding: chunked']), chunk(`{"x":"${'a'.repeat(LIMIT)}"}`), '0\r\n\r\n']),
    expect: [413],
  },
  { name: 'gzip garbage', send: (p, a) => exchange([withLength(p, a, 'not gzip at all', ['Content-Encoding: gzip'])]), expect: [400] },
  {
    name: 'truncated gzip',
    send: (p, a) => exchange([withLength(p, a, gzipSync('{"shop":"a.example"}').subarray(0, 10), ['Content-Encoding: gzip'])]),
    expect: [400],
  },
  {
    name: 'gzip bomb',
    send: (p, a) => exchange([withLength(p, a, gzipSync(Buffer.alloc(10 * LIMIT, 32)), ['Content-Encoding: gzip'])]),
    expect: [413],
  },
  { name: 'unknown content encoding', send: (p, a) => exchange([withLength(p, a, '{}', ['Content-Encoding: compress'])]), expect: [415] },
  {
    name: 'unsupported charset',
    send: (p, a) => exchange([withLength(p, a, '{}', ['Content-Type: application/json; charset=latin1'])]),
    expect: [415],
  },
  {
    name: 'UTF-32 charset',
    send: (p, a) => exchange([withLength(p, a, Buffer.from('{}\0\0'), ['Content-Type: application/json; charset=utf-32'])]),
    expect: [400, 415],
  },
  { name: 'malformed Content-Type', send: (p, a) => exchange([withLength(p, a, '{}', ['Content-Type: ;;;==='])]), expect: [400] },
  { name: 'body too slow', send: (p, a) => exchange([post(p, a, ['Content-Length: 100'], '{"sh'), 'op'], { gapMs: 800 }), expect: [408] },
  { name: 'body shorter than declared', send: (p, a) => exchange([post(p, a, ['Content-Length: 100'], '{"shop":1}')]), expect: [408] },
  {
    name: 'Content-Length and Transfer-Encoding',
    send: (p, a) => exchange([post(p, a, ['Content-Length: 2', 'Transfer-Encoding: chunked']), chunk('{}'), '0\r\n\r\n']),
    expect: [400],
  },
  {
    name: 'bad chunk size',
    send: (p, a) => exchange([post(p, a, ['Transfer-Encoding: chunked']), 'zz\r\n{}\r\n0\r\n\r\n']),
    expect: [400],
  },
  { name: 'two Content-Lengths', send: (p, a) => exchange([post(p, a, ['Content-Length: 2', 'Content-Length: 3'], '{}')]), expect: [400] },
  { name: 'bad header name', send: (p, a) => exchange([post(p, a, ['Bad Header: x', 'Content-Length: 2'], '{}')]), expect: [400] },
  {
    name: 'header block too large',
    send: (p, a) => exchange([post(p, a, [`X-Big: ${'b'.repeat(40_000)}`, 'Content-Length: 2'], '{}')]),
    expect: [431],
  },
  { name: 'malformed percent-encoding', send: (p, a) => exchange([withLength(`${p}/%ZZ`, a, '{}')]), expect: [400, 404] },
  { name: 'unknown method', send: (p, a) => exchange([head('BREW', p, a)]), expect: [400] },
  { name: 'other method', send: (p, a) => exchange([head('PUT', p, [...a, 'Content-Length: 2']) + '{}']), expect: [405, 410] },
  {
    name: 'aborted mid-body',
    send: (p, a) => exchange([post(p, a, ['Content-Length: 100'], '{"shop":"a.exa')], { abort: true }),
    expect: [],
  },
];

function expectSpecShape(what: string, a: Answer, statuses: number[]): void {
  expect(statuses, `${what}: ${a.status} ${a.body.slice(0, 200)}`).toContain(a.status);
  expect(a.headers['x-content-type-options'], what).toBe('nosniff');
  expect(a.headers['cache-control'], what).toBe('no-store');
  if (a.status === 401) return expect(a.body, what).toBe('unauthorized');
  expect(a.headers['content-type'], what).toMatch(/^application\/json/);
  expect(JSON.parse(a.body), what).toEqual({ ok: false, error: expect.any(String) });
}

describe('every error class of the HTTP stack, at every route, is its 4xx in the spec shape', () => {
  for (const c of CLASSES) {
    it(`${c.name} -> ${c.expect.join(' or ') || 'nothing (the client is gone), and no 5xx'}`, async () => {
      // Every route at once: the deadline cases each wait out the body deadline.
      const answers = await Promise.all(WRITES.map((w) => c.send(w.path, w.auth)));
      for (const [i, w] of WRITES.entries()) {
        const a = answers[i];
        if (c.expect.length === 0) continue;
        expect(a, `${c.name} at ${w.path}`).not.toBeNull();
        // The removed interfaces answer 410 whatever the body, once Node's parser has let it through.
        const removed = w.auth.length === 0 && a!.status === 410;
        expectSpecShape(`${c.name} at ${w.path}`, a!, removed ? [410] : c.expect);
      }
    });
  }

  it('read routes: a malformed path, a bad header, a header block too large', async () => {
    for (const path of READS) {
      expectSpecShape(`${path}/%ZZ`, (await exchange([head('GET', `${path}/%ZZ`, ['x-ingest-secret: s'])]))!, [400, 404]);
      expectSpecShape(`${path} bad header`, (await exchange([head('GET', path, ['Bad Header: x'])]))!, [400]);
      expectSpecShape(`${path} big header`, (await exchange([head('GET', path, [`X-Big: ${'b'.repeat(40_000)}`])]))!, [431]);
    }
    expectSpecShape('/api/commands/%ZZ', (await exchange([head('GET', '/api/commands/%ZZ', ['x-ingest-secret: s'])]))!, [400]);
  });

  it('nothing was appended, and the metrics recorded no 5xx', async () => {
    expect(appended).toEqual([]);
    const metrics = await registry.metrics();
    expect(metrics).toMatch(/http_requests_total\{[^}]*status="4\d\d"/);
    expect(metrics).not.toMatch(/http_requests_total\{[^}]*status="5\d\d"/);
  });
});

describe('the safe headers are on every answer of the API', () => {
  it.each([
    [
      'a 202',
      withLength('/api/ingest/products', ['x-ingest-secret: s', 'Prefer: respond-async'], '{"shop":"a.example","products":[]}'),
      202,
    ],
    ['the text 401', withLength('/api/ingest/products', [], '{}'), 401],
    ['a 401 of GET /api/commands', Buffer.from(head('GET', '/api/commands/0190a6e2-0000-7000-8000-000000000000', [])), 401],
    ['a 404', Buffer.from(head('GET', '/api/commands/0190a6e2-0000-7000-8000-000000000000', ['x-ingest-secret: s'])), 404],
    ['a 410', withLength('/api/pixel-events', [], '{}'), 410],
    ['the OPTIONS answer', Buffer.from(head('OPTIONS', '/api/ingest/products', [])), 204],
    ['a 405', Buffer.from(head('DELETE', '/api/ingest/products', [])), 405],
    ['/healthz', Buffer.from(head('GET', '/healthz', [])), 200],
  ])('%s', async (_what, request, status) => {
    const a = (await exchange([request]))!;
    expect(a.status).toBe(status);
    expect(a.headers['x-content-type-options']).toBe('nosniff');
    expect(a.headers['cache-control']).toBe('no-store');
  });
});
