import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCOPES } from '@ingest/access';
import type { JsonObject } from '@ingest/contracts';
import { openApiOracle, type Credentials, type DocOperation, type OpenApiOracle } from '../../testing/openapiOracle.ts';
import { requestDraws, sendDraw, type Draw } from '../../testing/openapiDraws.ts';
import { startTestGateway, TEST_CRON_SECRET, TEST_INGEST_SECRET, type TestGateway, type HttpAnswer } from '../../testing/testGateway.ts';

// Every answer of every route is one the OpenAPI document lists for it (docs/api.md "API contracts"):
// each operation is asked as it should be and in each way the gateway refuses (no, a wrong or an
// unconfigured credential, a key of another shop or without the scope, a body that is not JSON, too
// large or wrongly encoded, a bad query or header, a shop over its budget, a method the path does not
// serve), and each answer's status, media type, body and required headers must be documented.
const SHOP = 'statuses.example';
const TIMES = { from: new Date('2000-01-01T00:00:00Z'), until: new Date(Date.now() - 86_400_000) };
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];
let g: TestGateway;
/** No secret configured (503), a small body limit (413), a shop budget of one line a second (429). */
let closed: TestGateway;
let small: TestGateway;
let tight: TestGateway;
let oracle: OpenApiOracle;
let creds: Credentials;
let otherShopKey: string;

beforeAll(async () => {
  [g, closed, small, tight] = await Promise.all([
    startTestGateway(),
    startTestGateway({ ingestSecrets: [], cronSecrets: [] }),
    startTestGateway({ bodyLimitBytes: 1024 }),
    startTestGateway({ shopRateLinesPerS: 1, shopBurstLines: 1 }),
  ]);
  oracle = openApiOracle((await (await fetch(`${g.url}/openapi.json`)).json()) as JsonObject);
  creds = {
    ingestSecret: TEST_INGEST_SECRET,
    cronSecret: TEST_CRON_SECRET,
    cronShop: SHOP,
    bearerAuth: (await g.keys.create({ shop: SHOP, scopes: [...SCOPES] })).key,
  };
  otherShopKey = (await g.keys.create({ shop: 'another.example', scopes: [...SCOPES] })).key;
});
afterAll(async () => {
  await Promise.all([g, closed, small, tight].map((x) => x?.close()));
});

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
const platform = (o: DocOperation): Record<string, string> =>
  oracle.credentialHeaders(((o.op['security'] as Array<Record<string, unknown>> | undefined) ?? [{}])[0] ?? {}, creds);
const secured = (o: DocOperation): boolean => ((o.op['security'] as unknown[] | undefined) ?? []).length > 0;

/** The ways each operation is asked: a name, the gateway, the request and its credentials. */
function probes(o: DocOperation, d: Draw): Array<[string, TestGateway, Draw, Record<string, string>]> {
  const asked = platform(o);
  const out: Array<[string, TestGateway, Draw, Record<string, string>]> = [
    ['as the document says', g, d, asked],
    ['Prefer: respond-async', g, { ...d, headers: { ...d.headers, Prefer: 'respond-async' } }, asked],
  ];
  if (secured(o)) {
    out.push(
      ['without credentials', g, d, {}],
      ['with a wrong secret', g, d, { 'x-ingest-secret': 'wrong', 'x-cron-secret': 'wrong', 'x-shop': SHOP }],
      ['with an unknown key', g, d, bearer('ik_unknown')],
      ['with a key of another shop', g, d, bearer(otherShopKey)],
      ['with x-shop of another shop', g, d, { ...bearer(creds.bearerAuth), 'x-shop': 'another.example' }],
      ['with no secret configured', closed, d, {}],
    );
  }
  if (d.body !== undefined) {
    const raw = (body: string, headers: Record<string, string> = {}): Draw => ({
      ...d,
      body: undefined,
      headers: { ...d.headers, ...headers, raw: body },
    });
    out.push(
      ['a body that is not JSON', g, raw('{'), asked],
      ['a body that is not an object', g, raw('[]'), asked],
      ['an unknown field', g, { ...d, body: { ...(d.body as object), colour: 'red' } }, asked],
      ['a NUL', g, raw('{"shop":"a\\u0000"}'), asked],
      ['a body over the limit', small, { ...d, body: { ...(d.body as object), pad: 'x'.repeat(2048) } }, asked],
      ['an unknown Content-Encoding', g, raw('{}', { 'content-encoding': 'compress' }), asked],
      ['a shop over its budget', tight, d, asked],
      ['a shop over its budget, again', tight, d, asked],
    );
  }
  if (oracle.parameters(o).some((p) => p['name'] === 'dry_run'))
    out.push(['dry_run=maybe', g, { ...d, query: { ...d.query, dry_run: 'maybe' } }, asked]);
  if (oracle.parameters(o).some((p) => p['name'] === 'Idempotency-Key'))
    out.push(['a bad Idempotency-Key', g, { ...d, headers: { ...d.headers, 'Idempotency-Key': '""' } }, asked]);
  for (const p of oracle.parameters(o).filter((x) => x['in'] === 'query'))
    out.push([`a bad ${String(p['name'])}`, g, { ...d, query: { ...d.query, [String(p['name'])]: '' } }, asked]);
  return out;
}

/** Sends a probe; a `raw` header stands for a body sent as it is. */
async function ask(o: DocOperation, gateway: TestGateway, d: Draw, credentials: Record<string, string>): Promise<HttpAnswer> {
  const { raw, ...headers } = d.headers;
  if (raw === undefined) return sendDraw(gateway.url, o, d, credentials);
  const url = new URL(gateway.url + o.path.replace(/\{(\w+)\}/g, (_, n: string) => encodeURIComponent(d.path[n] ?? '')));
  for (const [k, v] of Object.entries(d.query)) url.searchParams.set(k, v);
  const res = await fetch(url, {
    method: o.method.toUpperCase(),
    headers: { ...credentials, ...headers, 'content-type': 'application/json' },
    body: raw,
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, text, json, headers: res.headers };
}

describe('every answer is documented', () => {
  it('each operation, asked as it should be and in each way the gateway refuses', async () => {
    const seen = new Map<string, Set<number>>();
    for (const o of oracle.operations()) {
      // A request with items, where the body has a list: a shop's budget counts them (lines per second).
      const samples = fc.sample(requestDraws(oracle, o, TIMES), { numRuns: 20, seed: 20261127 });
      const drawn = samples.find((x) => Object.values(x.body ?? {}).some((v) => Array.isArray(v) && v.length)) ?? samples[0]!;
      // The test key's shop, so a key's request is about its own shop; no dry run (this tier's dry
      // runner answers a fixed body, not the gateway's).
      const { dry_run: _q, ...query } = drawn.query;
      const body = drawn.body && typeof drawn.body === 'object' ? { ...(drawn.body as Record<string, unknown>) } : undefined;
      if (body && 'shop' in body) body['shop'] = SHOP;
      delete body?.['dry_run'];
      // No Idempotency-Key either: this tier's database never lets a key's claim be won (409).
      const { 'Idempotency-Key': _key, ...headers } = drawn.headers;
      const d: Draw = { ...drawn, query, headers, body: body ?? drawn.body };
      for (const [probe, gateway, request, credentials] of probes(o, d)) {
        const a = await ask(o, gateway, request, credentials);
        expect(oracle.undocumented(o, a), `${o.name} ${probe}`).toEqual([]);
        seen.set(o.name, (seen.get(o.name) ?? new Set()).add(a.status));
      }
    }
    // The probes reach the refusals they are for.
    expect([...(seen.get('POST /api/ingest/inventory-snapshot') ?? [])]).toEqual(
      expect.arrayContaining([202, 400, 401, 403, 413, 415, 429, 503]),
    );
  }, 60_000);

  it('the files of the documentation page, in the media types the document lists (text/css, text/javascript, image/png)', async () => {
    const o = oracle.operations().find((x) => x.name === 'GET /docs/{asset}')!;
    const page = await (await fetch(`${g.url}/docs`)).text();
    const files = [...page.matchAll(/(?:src|href)="\/docs\/([^"]+)"/g)].map((m) => m[1]!);
    expect(files.length).toBeGreaterThanOrEqual(4);
    for (const file of files) {
      const res = await fetch(`${g.url}/docs/${file}`);
      const a: HttpAnswer = { status: res.status, text: await res.text(), json: undefined, headers: res.headers };
      expect([a.status, oracle.undocumented(o, a)], file).toEqual([200, []]);
    }
  });

  it('a method a path does not serve: 405 with Allow, as every operation of the path documents it', async () => {
    const paths = new Map<string, DocOperation[]>();
    for (const o of oracle.operations()) paths.set(o.path, [...(paths.get(o.path) ?? []), o]);
    for (const [path, ops] of paths) {
      if (ops.some((o) => (o.op['tags'] as string[]).includes('Removed'))) continue;
      const served = new Set(ops.map((o) => o.method.toUpperCase()));
      const url = `${g.url}${path.replace(/\{\w+\}/g, 'x')}`;
      for (const method of METHODS.filter((m) => !served.has(m) && m !== 'OPTIONS' && !(m === 'HEAD' && served.has('GET')))) {
        const res = await fetch(url, { method });
        const text = method === 'HEAD' ? '' : await res.text();
        const a: HttpAnswer = { status: res.status, text, json: text ? JSON.parse(text) : undefined, headers: res.headers };
        for (const o of ops) expect(oracle.undocumented(o, a), `${method} ${path}`).toEqual([]);
        expect(a.status, `${method} ${path}`).toBe(405);
      }
    }
  });
});
