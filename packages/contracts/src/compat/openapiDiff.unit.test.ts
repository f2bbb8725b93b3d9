import { describe, expect, it } from 'vitest';
import type { JsonObject } from '../schemaFiles.ts';
import { compareOpenApi } from './openapiDiff.ts';
import type { Finding } from './types.ts';

// The HTTP rules of docs/api.md#changing-a-published-contract on a small OpenAPI 3.1 document.
const json = (schema: JsonObject) => ({ 'application/json': { schema } });
const Product = {
  $comment: 'schemas/http/product.json',
  type: 'object',
  additionalProperties: false,
  required: ['barcode'],
  properties: { barcode: { type: 'string' }, mode: { enum: ['absolute', 'delta'] } },
};
const Reply = {
  $comment: 'schemas/http/responses.json#/$defs/reply',
  type: 'object',
  properties: { ok: { const: true }, lines_stale: { type: 'integer' } },
};

function api(edit: (doc: any) => void = () => {}): JsonObject {
  const doc: any = {
    openapi: '3.1.0',
    paths: {
      '/api/products': {
        post: {
          security: [{ ingestSecret: [] }, { bearerAuth: ['products:write'] }],
          parameters: [{ name: 'Prefer', in: 'header', required: false, schema: { type: 'string' } }],
          requestBody: { required: true, content: json({ $ref: '#/components/schemas/Product' }) },
          responses: {
            '200': {
              description: 'ok',
              headers: { RateLimit: { schema: { type: 'string' } } },
              content: json({ $ref: '#/components/schemas/Reply' }),
            },
            '429': { description: 'slow down' },
          },
        },
      },
      '/api/commands/{id}': { get: { responses: { '200': { description: 'ok', content: json({ $ref: '#/components/schemas/Reply' }) } } } },
    },
    components: {
      schemas: { Product, Reply },
      securitySchemes: {
        ingestSecret: { type: 'apiKey', in: 'header', name: 'x-ingest-secret' },
        bearerAuth: { type: 'http', scheme: 'bearer' },
      },
    },
  };
  edit(doc);
  return doc as JsonObject;
}

function diff(edit: (doc: any) => void): Finding[] {
  const out: Finding[] = [];
  compareOpenApi(new Map([['openapi.json', api()]]), new Map([['openapi.json', api(edit)]]), (c, via) => out.push({ ...c, via: [via] }));
  return out;
}
const post = (doc: any) => doc.paths['/api/products'].post;

describe('compareOpenApi', () => {
  it('finds nothing in the same document, nor in additions (a path, a status, an optional field, a credential)', () => {
    expect(diff(() => {})).toEqual([]);
    expect(
      diff((doc) => {
        doc.paths['/api/v2/products'] = doc.paths['/api/products'];
        post(doc).responses['405'] = { description: 'wrong method' };
        doc.components.schemas.Product = { ...Product, properties: { ...Product.properties, note: { type: 'string' } } };
        post(doc).security.push({ cronSecret: [] });
      }),
    ).toEqual([]);
  });

  it('operation-removed: a path or a method; a path parameter renamed is the same path', () => {
    expect(diff((doc) => delete doc.paths['/api/products'])).toEqual([
      expect.objectContaining({ rule: 'operation-removed', what: 'POST /api/products removed', subject: 'POST /api/products' }),
    ]);
    expect(
      diff((doc) => {
        doc.paths['/api/commands/{command_id}'] = doc.paths['/api/commands/{id}'];
        delete doc.paths['/api/commands/{id}'];
      }),
    ).toEqual([]);
  });

  it('status-removed: a documented status is no longer documented', () => {
    expect(diff((doc) => delete post(doc).responses['429'])).toEqual([
      expect.objectContaining({ rule: 'status-removed', role: 'response', what: 'status 429 removed', via: ['POST /api/products'] }),
    ]);
  });

  it('field-removed in a response, named at its schemas/ file and reached from every operation that answers it', () => {
    const found = diff((doc) => {
      doc.components.schemas.Reply = { ...Reply, properties: { ok: { const: true }, lines_late: { type: 'integer' } } };
    });
    expect(found.map((f) => [f.rule, f.role, f.where, f.via[0]])).toEqual([
      ['field-removed', 'response', 'schemas/http/responses.json#/$defs/reply/properties/lines_stale', 'POST /api/products'],
      ['field-removed', 'response', 'schemas/http/responses.json#/$defs/reply/properties/lines_stale', 'GET /api/commands/{id}'],
    ]);
    expect(diff((doc) => delete post(doc).responses['200'].headers.RateLimit)).toEqual([
      expect.objectContaining({ rule: 'field-removed', what: 'response header `RateLimit` removed (status 200)' }),
    ]);
  });

  it('required-added: a new required request field, a parameter that becomes required', () => {
    expect(
      diff((doc) => {
        doc.components.schemas.Product = {
          ...Product,
          required: ['barcode', 'region'],
          properties: { ...Product.properties, region: { type: 'string' } },
        };
      }),
    ).toEqual([
      expect.objectContaining({
        rule: 'required-added',
        role: 'request',
        what: 'field `region` is now required',
        where: 'schemas/http/product.json#/properties/region',
      }),
    ]);
    expect(diff((doc) => (post(doc).parameters[0].required = true))).toEqual([
      expect.objectContaining({ rule: 'required-added', what: 'header prefer parameter is now required' }),
    ]);
  });

  it('enum-value-removed in a request body, and a response may not narrow either', () => {
    const narrowed = diff((doc) => {
      doc.components.schemas.Product = { ...Product, properties: { ...Product.properties, mode: { enum: ['absolute'] } } };
      doc.components.schemas.Reply = { ...Reply, properties: { ...Reply.properties, lines_stale: { type: 'integer', format: 'int32' } } };
    });
    expect(narrowed.map((f) => [f.rule, f.role])).toEqual([
      ['enum-value-removed', 'request'],
      ['format-added', 'response'],
      ['format-added', 'response'],
    ]);
  });

  it('media-type-removed: a body no longer taken or given as a media type', () => {
    expect(diff((doc) => (post(doc).requestBody.content = { 'text/csv': { schema: {} } }))).toEqual([
      expect.objectContaining({ rule: 'media-type-removed', role: 'request', what: 'request body: application/json removed' }),
    ]);
  });

  it('credential-removed: an alternative dropped, a scope added, or a scheme that reads another header', () => {
    expect(diff((doc) => post(doc).security.pop())).toEqual([
      expect.objectContaining({ rule: 'credential-removed', what: 'bearerAuth [products:write] is no longer accepted' }),
    ]);
    expect(rulesOf(diff((doc) => (post(doc).security[1] = { bearerAuth: ['products:write', 'admin'] })))).toEqual(['credential-removed']);
    expect(rulesOf(diff((doc) => (doc.components.securitySchemes.ingestSecret.name = 'x-secret')))).toEqual(['credential-removed']);
  });
});

const rulesOf = (f: Finding[]) => f.map((x) => x.rule);
