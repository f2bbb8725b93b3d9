import fc from 'fast-check';
import type { JsonObject } from '@ingest/contracts';
import type { DocOperation, OpenApiOracle } from './openapiOracle.ts';
import { schemaArbitrary, type SchemaArbitraryOptions } from './schemaArbitrary.ts';
import { fetchAnswer, type HttpAnswer } from './testGateway.ts';

// Requests an OpenAPI document allows, drawn from the document itself, and how they are sent.

/** One request: its body (undefined: none), path parameters, query and headers. */
export interface Draw {
  body: unknown;
  path: Record<string, string>;
  query: Record<string, string>;
  headers: Record<string, string>;
}

/** Requests the document allows for `o`; a body is kept only when the document's validator accepts it. */
export function requestDraws(oracle: OpenApiOracle, o: DocOperation, times: SchemaArbitraryOptions['times']): fc.Arbitrary<Draw> {
  const arb = (schema: JsonObject): fc.Arbitrary<unknown> => schemaArbitrary(schema, { resolve: oracle.resolve, times });
  const parts: Record<string, fc.Arbitrary<unknown>> = {};
  for (const p of oracle.parameters(o)) {
    const name = String(p['name']);
    // `cursor` is a token of the gateway's own answer, and Prefer's one value is respond-async.
    if (name === 'cursor') continue;
    const value =
      name === 'Prefer'
        ? fc.constant('respond-async')
        : arb(p['schema'] as JsonObject).map((v) => (typeof v === 'string' ? v : JSON.stringify(v)));
    parts[`${String(p['in'])}:${name}`] = p['required'] === true ? value : fc.option(value, { nil: undefined });
  }
  const at = oracle.bodyAt(o);
  if (at) {
    const body = arb({ $ref: `#${at}` }).filter((b) => oracle.check(at, b) === null);
    parts['body'] = (o.op['requestBody'] as JsonObject)['required'] === true ? body : fc.option(body, { nil: undefined });
  }
  return fc.record(parts).map((r) => {
    const d: Draw = { body: r['body'], path: {}, query: {}, headers: {} };
    for (const [key, value] of Object.entries(r)) {
      const [where, name = ''] = key.split(':');
      // Parameters are drawn as their text (above); the body is set already.
      if (typeof value !== 'string' || key === 'body') continue;
      if (where === 'path') d.path[name] = value;
      else if (where === 'query') d.query[name] = value;
      else d.headers[name] = value;
    }
    return d;
  });
}

/** Sends a drawn request to the gateway at `base`, with `credentials` (headers). */
export function sendDraw(base: string, o: DocOperation, d: Draw, credentials: Record<string, string>): Promise<HttpAnswer> {
  const url = new URL(base + o.path.replace(/\{(\w+)\}/g, (_, n: string) => encodeURIComponent(d.path[n] ?? '')));
  for (const [k, v] of Object.entries(d.query)) url.searchParams.set(k, v);
  return fetchAnswer(url.toString(), {
    method: o.method.toUpperCase(),
    headers: { ...credentials, ...d.headers, ...(d.body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(d.body === undefined ? {} : { body: JSON.stringify(d.body) }),
  });
}
