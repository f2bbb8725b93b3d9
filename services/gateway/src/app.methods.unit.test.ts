import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import type { JsonObject } from '@ingest/contracts';
import { ERROR_CODE_HEADER } from './errors/catalog.ts';
import { fetchAnswer, useTestGateway } from '../testing/testGateway.ts';

// Methods (RFC 9110 §9, §15.5.6): a path the gateway serves answers any other method 405 with Allow,
// OPTIONS 204 with Allow, and HEAD wherever it answers GET; an unknown path stays 404 (D11).
const g = useTestGateway();

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

describe('a path asked with a method it does not serve', () => {
  it('is 405 with Allow, the error shape and its code, asking for no credential', async () => {
    const r = await fetchAnswer(`${g.url}/api/ingest/products`, { method: 'PUT', body: '{}' });
    expect(r.status).toBe(405);
    expect(r.headers.get('allow')).toBe('POST, OPTIONS');
    expect(r.headers.get(ERROR_CODE_HEADER)).toBe('method_not_allowed');
    expect(r.json).toEqual({ ok: false, error: 'method PUT not allowed on /api/ingest/products; allowed: POST, OPTIONS' });
    const keys = await fetchAnswer(`${g.url}/api/admin/keys`, { method: 'DELETE' });
    expect([keys.status, keys.headers.get('allow')]).toEqual([405, 'GET, HEAD, POST, OPTIONS']);
  });

  it('matches paths as the routes do: parameters, any case, a trailing slash', async () => {
    for (const path of ['/api/commands/anything', '/API/Ingest/Products/', '/docs/swagger-ui.css', '/schemas/http/nope.json']) {
      const r = await fetchAnswer(`${g.url}${path}`, { method: 'PATCH' });
      expect(r.status, path).toBe(405);
    }
  });

  it('HEAD is served where GET is, and 405 elsewhere; TRACE is 405 too', async () => {
    expect((await fetch(`${g.url}/openapi.json`, { method: 'HEAD' })).status).toBe(200);
    const head = await fetch(`${g.url}/api/ingest/products`, { method: 'HEAD' });
    expect([head.status, head.headers.get('allow')]).toEqual([405, 'POST, OPTIONS']);
    // fetch refuses to send TRACE.
    const trace = await new Promise<{ status?: number; allow?: string | string[] }>((resolve, reject) => {
      const req = request(`${g.url}/healthz`, { method: 'TRACE' }, (res) => {
        res.resume();
        resolve({ status: res.statusCode, allow: res.headers['allow'] });
      });
      req.on('error', reject).end();
    });
    expect(trace).toEqual({ status: 405, allow: 'GET, HEAD, OPTIONS' });
  });
});

describe('OPTIONS', () => {
  it('is 204 with Allow on a path the gateway serves, without credentials', async () => {
    const r = await fetchAnswer(`${g.url}/api/commands/0194f3a2-5c1e-7d4b-9a6f-2b8c4d6e8f01`, { method: 'OPTIONS' });
    expect([r.status, r.headers.get('allow'), r.text]).toEqual([204, 'GET, HEAD, OPTIONS', '']);
    expect(r.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('is 404 on an unknown path (D11), and 410 on a removed one (D12)', async () => {
    expect((await fetchAnswer(`${g.url}/nowhere`, { method: 'OPTIONS' })).status).toBe(404);
    expect((await fetchAnswer(`${g.url}/api/pixel-events`, { method: 'OPTIONS' })).status).toBe(410);
  });
});

describe('the methods of every documented path', () => {
  it('Allow names what the document lists, with HEAD beside GET, and OPTIONS; the rest is 405, an unknown path 404', async () => {
    const doc = (await (await fetch(`${g.url}/openapi.json`)).json()) as { paths: Record<string, JsonObject> };
    for (const [template, item] of Object.entries(doc.paths)) {
      const path = template.replace(/\{[^}]+\}/g, 'x');
      const documented = Object.keys(item).map((m) => m.toUpperCase());
      if (documented.includes('PUT')) continue; // a removed interface answers 410 to every method (D12)
      const allow = METHODS.filter((m) => documented.includes(m) || m === 'OPTIONS' || (m === 'HEAD' && documented.includes('GET')));
      for (const method of METHODS.filter((m) => !allow.includes(m))) {
        const r = await fetch(`${g.url}${path}`, { method });
        expect([r.status, r.headers.get('allow')], `${method} ${template}`).toEqual([405, allow.join(', ')]);
      }
    }
    expect((await fetch(`${g.url}/api/ingest/nothing`, { method: 'PUT' })).status).toBe(404);
  });
});
