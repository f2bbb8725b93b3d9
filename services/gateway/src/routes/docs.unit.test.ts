import { Parser } from '@asyncapi/parser';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buildOpenApi,
  NUL_FREE_NOT_BLANK,
  PLANNED,
  readSchemaFiles,
  REMOVED_METHODS,
  SchemaRegistry,
  SCHEMA_ID_BASE,
  type JsonObject,
} from '@ingest/contracts';
import { CLOUDEVENTS_SOURCE, EVENT_DATA_SCHEMAS, KEY_FIELDS, ORDER_LINE_FIELDS } from '@ingest/domain';
import type { Pool } from '@ingest/db';
import { DEFAULT_TOPICS } from '@ingest/kafka';
import { createRegistry, publicBaseUrl } from '@ingest/runtime';
import { silentLogger } from '@ingest/runtime/testing';
import { buildApp } from '../app.ts';
import { DEFAULT_GATEWAY_CONFIG } from '../config.ts';
import { startTestGateway, TEST_CRON_SECRET, TEST_INGEST_SECRET, type TestGateway } from '../../testing/testGateway.ts';

// The API contracts (docs/api.md "API contracts") at the buildApp tier: the served OpenAPI 3.1
// and AsyncAPI 3.0 documents are valid, match the routes express serves, and describe what the
// gateway really answers.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const BASE = publicBaseUrl({});
let g: TestGateway;
let openapi: JsonObject;
let asyncapi: JsonObject;
const BODY_LIMIT = 64 * 1024;

beforeAll(async () => {
  g = await startTestGateway({ bodyLimitBytes: BODY_LIMIT });
  openapi = (await (await fetch(`${g.url}/openapi.json`)).json()) as JsonObject;
  asyncapi = (await (await fetch(`${g.url}/asyncapi.json`)).json()) as JsonObject;
});
afterAll(() => g?.close());

/** Redocly's recommended rules, every problem an error. Two rules do not fit and are off, each for its reason. */
async function lintOpenApi(doc: JsonObject): Promise<string[]> {
  const config = await createConfig({
    extends: ['recommended'],
    rules: {
      // Examples are checked here against each schema as a whole; redocly would also refuse, inside
      // `allOf`, a part for not naming the properties another part names.
      'no-invalid-media-type-examples': { severity: 'error', allowAdditionalProperties: true },
      // Health, metrics and the documents refuse nothing; removed paths only answer 410 (D12).
      'operation-4xx-response': 'off',
      'operation-2xx-response': 'off',
      'no-unused-components': 'error',
    },
  });
  const problems = await lintFromString({ source: JSON.stringify(doc), absoluteRef: `${BASE}/openapi.json`, config });
  return problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer ?? ''}`);
}

/** `METHOD /path/{param}` of every route of the app's router, nested routers included. */
function servedRoutes(): string[] {
  const app = buildApp({
    config: { ...DEFAULT_GATEWAY_CONFIG, ingestSecrets: [], cronSecrets: [] },
    schemas: new SchemaRegistry(),
    commandLog: { appendCommand: async () => {} },
    replies: { register: () => ({ wait: async () => null, cancel: () => {} }), close: async () => {} },
    dryRunner: { run: () => Promise.reject(new Error('no dry runs here')) },
    pool: { query: async () => ({ rows: [] }) } as unknown as Pool,
    log: silentLogger(),
    registry: createRegistry(),
  });
  type Layer = { route?: { path: string; methods: Record<string, boolean> }; handle?: { stack?: Layer[] } };
  const out: string[] = [];
  const walk = (stack: Layer[]): void => {
    for (const layer of stack) {
      if (layer.route) {
        const path = layer.route.path.replace(/:(\w+)/g, '{$1}');
        for (const m of Object.keys(layer.route.methods)) {
          // router.all answers every method: the document lists it for REMOVED_METHODS.
          if (m === '_all') for (const each of REMOVED_METHODS) out.push(`${each.toUpperCase()} ${path}`);
          else out.push(`${m.toUpperCase()} ${path}`);
        }
      } else if (layer.handle?.stack) walk(layer.handle.stack);
    }
  };
  walk((app as unknown as { router: { stack: Layer[] } }).router.stack);
  return out.sort();
}

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace'];
function documentedRoutes(doc: JsonObject): string[] {
  const out: string[] = [];
  for (const [path, item] of Object.entries(doc['paths'] as Record<string, JsonObject>))
    for (const m of Object.keys(item)) if (HTTP_METHODS.includes(m)) out.push(`${m.toUpperCase()} ${path}`);
  return out.sort();
}

const DOC_ID = 'https://contracts.test/openapi.json';
/** ajv over the OpenAPI document: validates a value against any schema in it by JSON pointer. */
function docValidator(doc: JsonObject): (pointer: string, value: unknown) => string | null {
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema({ ...doc, $id: DOC_ID });
  return (pointer, value) => {
    const validate = ajv.compile({ $ref: `${DOC_ID}#${pointer}` });
    return validate(value) ? null : ajv.errorsText(validate.errors);
  };
}

type Op = {
  security: Array<Record<string, unknown>>;
  responses: Record<string, unknown>;
  parameters?: JsonObject[];
  requestBody?: { content: Record<string, { example: unknown }> };
};
const ptr = (...parts: string[]): string => parts.map((p) => '/' + p.replace(/~/g, '~0').replace(/\//g, '~1')).join('');

describe('GET /openapi.json', () => {
  it('is OpenAPI 3.1 that passes the recommended lint with no problem, served without credentials', async () => {
    expect(openapi['openapi']).toBe('3.1.0');
    expect(await lintOpenApi(openapi)).toEqual([]);
    const res = await fetch(`${g.url}/openapi.json`);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  });

  it('stays valid with every convention in progress switched on (Idempotency-Key, dry_run, per-shop 429)', async () => {
    const all = Object.fromEntries(Object.keys(PLANNED).map((k) => [k, true]));
    const doc = buildOpenApi({ publicBaseUrl: BASE, planned: all });
    expect(await lintOpenApi(doc)).toEqual([]);
    const post = (doc['paths'] as Record<string, Record<string, JsonObject>>)['/api/ingest/products']?.['post'];
    expect(JSON.stringify(post)).toContain('IdempotencyKey');
    expect(Object.keys(post?.['responses'] as object)).toEqual(expect.arrayContaining(['409', '422']));
  });

  it('documents every route express serves, and serves every route it documents', () => {
    expect(documentedRoutes(openapi)).toEqual(servedRoutes());
  });

  it('names the auth header of every endpoint: each write and the command result need a secret; the rest is open', () => {
    const paths = openapi['paths'] as Record<string, Record<string, Op>>;
    const secured = Object.entries(paths).flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([, op]) => op.security.length > 0)
        .map(([m]) => `${m} ${path}`),
    );
    expect(secured.sort()).toEqual(
      [
        '/api/admin/channels',
        '/api/admin/daily-snapshot',
        '/api/admin/locations',
        '/api/ingest/inventory-available',
        '/api/ingest/inventory-snapshot',
        '/api/ingest/products',
        '/api/inventory-levels/bulk-upsert',
        '/api/order-line-master/bulk-upsert',
        '/api/products/bulk-upsert',
        '/api/admin/keys',
      ]
        .map((p) => `post ${p}`)
        .concat('get /api/commands/{id}', 'get /api/admin/keys', 'delete /api/admin/keys/{key_id}')
        .concat('get /api/admin/commands', 'post /api/admin/parked/{command_id}/retry')
        .concat('post /api/admin/parked/{command_id}/skip')
        .sort(),
    );
    // D28: a per-shop key with the endpoint's scope is accepted beside the spec's secret.
    // D28: a per-shop key with the endpoint's scope is an alternative to the spec's secret; the cron
    // secret goes with its shop in x-shop (D8), which a key does not need.
    expect(paths['/api/products/bulk-upsert']?.['post']?.security).toEqual([
      { cronSecret: [], cronShop: [] },
      { bearerAuth: ['products:write'] },
    ]);
    expect(JSON.stringify(paths['/api/products/bulk-upsert']?.['post']?.parameters)).not.toContain('x-shop');
    expect(paths['/api/commands/{id}']?.['get']?.security).toEqual([
      { ingestSecret: [] },
      { cronSecret: [], cronShop: [] },
      { bearerAuth: ['commands:read'] },
    ]);
    expect(paths['/api/ingest/products']?.['post']?.security).toEqual([{ ingestSecret: [] }, { bearerAuth: ['products:write'] }]);
    expect(paths['/api/admin/daily-snapshot']?.['post']?.security).toEqual([{ ingestSecret: [] }]);
    expect(paths['/api/admin/keys']?.['post']?.security).toEqual([{ ingestSecret: [] }]);
    const schemes = (openapi['components'] as { securitySchemes: Record<string, { name: string }> }).securitySchemes;
    expect([schemes['ingestSecret']?.name, schemes['cronSecret']?.name, schemes['cronShop']?.name]).toEqual([
      'x-ingest-secret',
      'x-cron-secret',
      'x-shop',
    ]);
    // PLATFORM_SECRETS_FOR_RETAILERS=off: the retailer endpoints take a key only, as requireAccess then does.
    const keysOnly = buildOpenApi({ publicBaseUrl: BASE, platformSecretsForRetailers: false })['paths'] as Record<
      string,
      Record<string, Op>
    >;
    expect(keysOnly['/api/products/bulk-upsert']?.['post']?.security).toEqual([{ bearerAuth: ['products:write'] }]);
    expect(keysOnly['/api/admin/daily-snapshot']?.['post']?.security).toEqual([{ ingestSecret: [] }]);
  });

  it('embeds the schemas of schemas/http, not copies: each component is its file with the $refs pointed at components', () => {
    const components = (openapi['components'] as { schemas: Record<string, JsonObject> }).schemas;
    const file = readSchemaFiles().find((f) => f.name === 'http/products-ingest.request.json');
    const { $id: _id, ...rest } = file?.schema ?? {};
    // A request's component also says what the gateway checks beyond its file (openapiRequests.ts).
    const properties = rest['properties'] as Record<string, JsonObject>;
    expect(components['ProductsIngestRequest']).toEqual({
      ...rest,
      description: expect.stringMatching(new RegExp(`^${String(rest['description']).replace(/[.()]/g, '\\$&')} .*U\\+0000`)),
      properties: { ...properties, shop: { ...properties['shop'], pattern: NUL_FREE_NOT_BLANK } },
      $comment: 'schemas/http/products-ingest.request.json',
    });
    const answers = readSchemaFiles().find((f) => f.name === 'http/responses.json')?.schema['$defs'] as Record<string, JsonObject>;
    expect(components['Health']).toEqual({ ...answers['health'], $comment: 'schemas/http/responses.json#/$defs/health' });
    expect(components['InventoryLevelsAbsoluteLine']).toBeUndefined();
    expect(JSON.stringify(components)).not.toContain(SCHEMA_ID_BASE);
  });

  it('documents every field of an order-line row the projector reads, and no other (D20, D27)', () => {
    const row = (openapi['components'] as { schemas: Record<string, { properties: object }> }).schemas['OrderLineRow'];
    expect(Object.keys(row?.properties ?? {}).sort()).toEqual([...KEY_FIELDS, ...ORDER_LINE_FIELDS].sort());
  });

  it('shows request examples that the gateway accepts (202: in the log), with the documented auth', async () => {
    const paths = openapi['paths'] as Record<string, Record<string, Op>>;
    const validate = docValidator(openapi);
    let posted = 0;
    for (const [path, item] of Object.entries(paths)) {
      const op = item['post'];
      const example = op?.requestBody?.content['application/json']?.example;
      // The writes and the key minting: the operator API's POSTs act on a parked command (operator.unit.test.ts).
      if (!op || example === undefined || !('202' in op.responses || '201' in op.responses)) continue;
      const cron = op.security.some((s) => 'cronSecret' in s);
      const headers = cron
        ? { 'x-cron-secret': TEST_CRON_SECRET, 'x-shop': 'demo.myshop.example' }
        : { 'x-ingest-secret': TEST_INGEST_SECRET };
      const res = await fetch(`${g.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(example),
      });
      const body: unknown = await res.json();
      expect(validate(ptr('paths', path, 'post', 'requestBody', 'content', 'application/json', 'schema'), example), path).toBeNull();
      posted++;
      if (path === '/api/admin/keys') {
        // Not a command: the minted key (D28).
        expect(res.status, `${path}: ${JSON.stringify(body)}`).toBe(201);
        expect(validate(ptr('paths', path, 'post', 'responses', '201', 'content', 'application/json', 'schema'), body), path).toBeNull();
        continue;
      }
      expect(res.status, `${path}: ${JSON.stringify(body)}`).toBe(202);
      expect(validate(ptr('components', 'responses', 'Accepted', 'content', 'application/json', 'schema'), body), path).toBeNull();
    }
    expect(posted).toBe(10);
  });

  it('shows response examples that validate against their schemas', () => {
    const validate = docValidator(openapi);
    const schemas = (openapi['components'] as { schemas: Record<string, { examples?: unknown[] }> }).schemas;
    let checked = 0;
    for (const [name, schema] of Object.entries(schemas))
      for (const example of schema.examples ?? []) {
        expect(validate(ptr('components', 'schemas', name), example), name).toBeNull();
        checked++;
      }
    expect(checked).toBeGreaterThan(15);
  });

  it("documents the gateway's real refusals: 400, 401, 404, 410, 413 and 503 bodies match their documented schemas", async () => {
    const validate = docValidator(openapi);
    const jsonResponse = (name: string) => ptr('components', 'responses', name, 'content', 'application/json', 'schema');
    const cases: Array<[string, RequestInit, number, string]> = [
      [
        '/api/ingest/products',
        { method: 'POST', headers: { 'x-ingest-secret': TEST_INGEST_SECRET }, body: '{"products":[]}' },
        400,
        jsonResponse('BadRequest'),
      ],
      [
        '/api/ingest/products',
        { method: 'POST', headers: { 'x-ingest-secret': TEST_INGEST_SECRET }, body: 'x'.repeat(2 * BODY_LIMIT) },
        413,
        jsonResponse('TooLarge'),
      ],
      ['/api/commands/not-a-uuid', { headers: { 'x-ingest-secret': TEST_INGEST_SECRET } }, 404, jsonResponse('NotFound')],
      ['/api/admin/commands?limit=0', { headers: { 'x-ingest-secret': TEST_INGEST_SECRET } }, 400, jsonResponse('BadRequest')],
      [
        '/api/admin/parked/0194f3a2-5c1e-7d4b-9a6f-2b8c4d6e8f01/skip',
        { method: 'POST', headers: { 'x-ingest-secret': TEST_INGEST_SECRET }, body: '{"reason":"r"}' },
        404,
        jsonResponse('NotFound'),
      ],
      ['/api/pixel-events', { method: 'POST' }, 410, jsonResponse('Removed')],
      ['/schemas/http/nope.json', {}, 404, jsonResponse('NotFound')],
      ['/docs/package.json', {}, 404, jsonResponse('NotFound')],
    ];
    for (const [path, init, status, pointer] of cases) {
      const res = await fetch(`${g.url}${path}`, init);
      expect(res.status, path).toBe(status);
      expect(validate(pointer, await res.json()), path).toBeNull();
    }
    const unauthorized = await fetch(`${g.url}/api/ingest/products`, { method: 'POST', body: '{}' });
    expect([unauthorized.status, await unauthorized.text()]).toEqual([401, 'unauthorized']);
    const open = await startTestGateway({ ingestSecrets: [], cronSecrets: [] });
    try {
      const res = await fetch(`${open.url}/api/ingest/products`, { method: 'POST', body: '{}' });
      expect(res.status).toBe(503);
      expect(validate(jsonResponse('Unavailable'), await res.json())).toBeNull();
      // The contracts need no secret, even when none is configured.
      expect((await fetch(`${open.url}/openapi.json`)).status).toBe(200);
    } finally {
      await open.close();
    }
  });
});

describe('GET /docs', () => {
  it('is a Swagger UI page whose files are served from node_modules (works offline)', async () => {
    const page = await fetch(`${g.url}/docs`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await page.text();
    expect(html).toContain("url: '/openapi.json'");
    const assets = [...html.matchAll(/(?:src|href)="(\/docs\/[^"]+)"/g)].map((m) => m[1]!);
    expect(assets).toEqual(
      expect.arrayContaining(['/docs/swagger-ui.css', '/docs/swagger-ui-bundle.js', '/docs/swagger-ui-standalone-preset.js']),
    );
    expect(html).not.toMatch(/https?:\/\//);
    for (const asset of assets) {
      const res = await fetch(`${g.url}${asset}`);
      expect(res.status, asset).toBe(200);
      expect((await res.arrayBuffer()).byteLength, asset).toBeGreaterThan(0);
    }
    expect((await fetch(`${g.url}/docs/swagger-ui-bundle.js`)).headers.get('content-type')).toMatch(/javascript/);
  });
});

describe('GET /schemas/{group}/{file}', () => {
  it('serves every file of schemas/ read-only as application/schema+json, its $id being the URL it is served at', async () => {
    for (const file of readSchemaFiles()) {
      const res = await fetch(`${g.url}/schemas/${file.name}`);
      expect(res.status, file.name).toBe(200);
      expect(res.headers.get('content-type'), file.name).toMatch(/^application\/schema\+json/);
      const served = (await res.json()) as JsonObject;
      expect(served['$id']).toBe(`${BASE}/schemas/${file.name}`);
      expect({ ...served, $id: file.schema['$id'] }).toEqual(file.schema);
    }
    expect((await fetch(`${g.url}/schemas/http/product.json`, { method: 'PUT' })).status).toBe(405);
    expect((await fetch(`${g.url}/schemas/..%2F..%2Fpackage.json/x.json`)).status).toBe(404);
  });

  it('serves schemas whose relative $refs resolve to served URLs: a validator that fetches them by $id works', async () => {
    const ajv = new Ajv({ strict: false, loadSchema: async (uri) => (await (await fetch(uri.replace(BASE, g.url))).json()) as JsonObject });
    addFormats(ajv);
    const root = (await (await fetch(`${g.url}/schemas/http/inventory-levels.absolute-lines.json`)).json()) as JsonObject;
    const validate = await ajv.compileAsync(root);
    expect(validate({ lines: [{ barcode: 'A', location: { identifier_type: 'pos', identifier_value: 'S-1' }, on_hand_qty: 1 }] })).toBe(
      true,
    );
    expect(validate({ lines: [{ barcode: 'A', on_hand_qty: -1 }] })).toBe(false);
  });
});

describe('GET /asyncapi.json', () => {
  it('is AsyncAPI 3.0 that @asyncapi/parser accepts with no error or warning', async () => {
    expect(asyncapi['asyncapi']).toBe('3.0.0');
    const { document, diagnostics } = await new Parser().parse(JSON.stringify(asyncapi));
    // Severity 0 error, 1 warning; 2 and 3 are hints (e.g. that AsyncAPI 3.1 exists).
    expect(diagnostics.filter((d) => Number(d.severity) <= 1).map((d) => `${d.code}: ${d.message} at ${d.path.join('.')}`)).toEqual([]);
    expect(document).toBeDefined();
    // The parser's first parse loads its Spectral rule set: about a second on a quiet machine.
  }, 30_000);

  it('describes every topic the project produces or consumes, with key, CloudEvents headers, payload, retention', async () => {
    const doc = asyncapi as any;
    const channels = Object.values(doc.channels as Record<string, any>);
    expect(channels.map((c) => c.address).sort()).toEqual(Object.values(DEFAULT_TOPICS).sort());
    for (const c of channels) {
      expect(c.bindings.kafka.topic).toBe(c.address);
      expect(c.bindings.kafka.partitions).toBeGreaterThan(0);
      expect(c.description).toMatch(/kept/);
    }
    expect(doc.channels.commands.bindings.kafka.topicConfiguration).toMatchObject({ 'retention.ms': -1, 'cleanup.policy': ['delete'] });
    expect(doc.operations.applyCommand.action).toBe('receive');
    const types = new Set<string>();
    for (const name of ['auditRecord', 'operatorAction', 'stockZero', 'stockRestored']) {
      const m = doc.components.messages[name];
      expect(m.bindings.kafka.key.type).toBe('string');
      expect(m.headers.required).toEqual(
        expect.arrayContaining(['ce_specversion', 'ce_id', 'ce_type', 'ce_source', 'ce_time', 'ce_dataschema']),
      );
      expect(m.headers.properties.ce_source.const).toBe(CLOUDEVENTS_SOURCE);
      // D28: the command's sender; an operator action's actor may also be the parked tool's user.
      expect(m.headers.properties.ce_actor.pattern).toBe(
        name === 'operatorAction' ? '^(platform|key_[0-9a-f]{16}|cli:.+)$' : '^(platform|key_[0-9a-f]{16})$',
      );
      const type = m.headers.properties.ce_type.const as string;
      types.add(type);
      expect(m.headers.properties.ce_dataschema.const).toBe(`${BASE}/schemas/${EVENT_DATA_SCHEMAS[type]}`);
      expect(m.payload.$ref).toMatch(/^#\/components\/schemas\//);
    }
    // Every event type the project emits is documented (the relay names a dataschema for each).
    expect([...types].sort()).toEqual(Object.keys(EVENT_DATA_SCHEMAS).sort());
    expect(doc.components.messages.stockZero.payload.$ref).toBe('#/components/schemas/StockLevelEvent');
    expect(JSON.stringify(doc.channels.stockZero.description)).toMatch(/seq.*at least once/s);
  });
});
