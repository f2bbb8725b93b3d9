/* eslint-disable max-lines -- one document: every path, status and header of the API, declared once per kind of endpoint */
import { bundleSchemas, readSchemaFiles, schemaUrl, type JsonObject, type SchemaFile } from './schemaFiles.ts';
import { ERROR_CODE_HEADER, ERROR_CODES } from './errorCodes.ts';
import { OPERATOR_TAG, OPERATOR_TAG_DESCRIPTION, operatorPaths } from './openapiOperator.ts';
import { NUL_FREE, narrowRequestSchemas } from './openapiRequests.ts';

/**
 * The OpenAPI 3.1 document of the HTTP API, generated from schemas/ (bodies are the
 * files under schemas/http, bundled as components; nothing is copied by hand). What is not a body
 * (paths, auth, statuses) is declared here once per kind of endpoint, so a new header or status
 * shared by every write is one addition to `writeOperation` or to `PLANNED`.
 */
export interface OpenApiOptions {
  /** PUBLIC_BASE_URL: the server URL, and where the schemas are served. */
  publicBaseUrl: string;
  files?: SchemaFile[];
  version?: string;
  /** Whether `/metrics` is served on the API's port (false when the gateway has METRICS_PORT). */
  metricsOnApiPort?: boolean;
  /** Features of other work in progress, documented once they are served (see PLANNED). */
  planned?: Partial<typeof PLANNED>;
  /** PLATFORM_SECRETS_FOR_RETAILERS (D28): false takes the shared secrets off the retailer endpoints. */
  platformSecretsForRetailers?: boolean;
}

/**
 * Conventions being added to every write by other changes: each is one switch,
 * turned on where it is served. Off: the document describes what the gateway answers today.
 */
export const PLANNED = {
  /** `Idempotency-Key` request header, `Idempotent-Replayed` response header, 409/422 on key conflicts. */
  idempotencyKeyHeader: true,
  /** `?dry_run=true` on every write: the answer carries `dry_run: true` and `as_of`. */
  dryRunQuery: true,
  /** Per-shop 429 with Retry-After. */
  perShopRateLimit: true,
};

const JSON_TYPE = 'application/json';
const SCHEMA_PREFIX = '#/components/schemas/';

type Operation = JsonObject;
/** The spec's shared secret an endpoint takes (services/gateway edge/auth.ts AccessRule `platform`). */
type Platform = 'ingest' | 'cron' | 'ingest-or-cron';

const ref = (to: string): JsonObject => ({ $ref: to });
const response = (name: string): JsonObject => ref(`#/components/responses/${name}`);

/** Every way a write is refused before or after it reaches the log, as it applies (D8, D11, D13, docs/api.md "Errors"). */
function writeErrors(opts: { unprocessable: boolean; planned: typeof PLANNED }): Record<string, JsonObject> {
  return {
    '400': response('BadRequest'),
    '401': response('Unauthorized'),
    '403': response('Forbidden'),
    '408': response('BodyTimeout'),
    ...(opts.planned.idempotencyKeyHeader ? { '409': response('IdempotencyConflict') } : {}),
    '413': response('TooLarge'),
    '415': response('UnsupportedEncoding'),
    ...(opts.unprocessable || opts.planned.idempotencyKeyHeader ? { '422': response('Unprocessable') } : {}),
    '429': response('TooManyRequests'),
    '503': response('Unavailable'),
  };
}

interface WriteSpec {
  summary: string;
  description: string;
  tag: string;
  platform: Platform;
  /** The scope a per-shop key needs (D28); null: the platform credential only. */
  scope: string | null;
  /** A retailer endpoint: PLATFORM_SECRETS_FOR_RETAILERS=off takes the shared secrets off it (D28). */
  retailer: boolean;
  /** Request body schema (a schemas/ file name) and its shown example. */
  body: JsonObject;
  example: JsonObject;
  /** The 200 body: a `http/responses.json#<key>` def. */
  ok: string;
  unprocessable: boolean;
}

export function buildOpenApi(opts: OpenApiOptions): JsonObject {
  const files = (opts.files ?? readSchemaFiles()).filter((f) => f.name.startsWith('http/'));
  const planned = { ...PLANNED, ...opts.planned };
  const { components: schemas, refOf } = bundleSchemas(files, SCHEMA_PREFIX);
  narrowRequestSchemas(schemas, SCHEMA_PREFIX);
  /** Who may call an endpoint, as the gateway's requireAccess decides (services/gateway edge/auth.ts, D28). */
  const securityOf = (platform: Platform, scope: string | null, retailer: boolean): JsonObject[] => {
    const shared = !retailer || opts.platformSecretsForRetailers !== false;
    return [
      ...(shared && platform !== 'cron' ? [{ ingestSecret: [] }] : []),
      ...(shared && platform !== 'ingest' ? [{ cronSecret: [], cronShop: [] }] : []),
      ...(scope === null ? [] : [{ bearerAuth: [scope] }]),
    ];
  };
  const s = (name: string): JsonObject => ref(refOf(name));
  const r = (key: string): JsonObject => s(`http/responses.json#${key}`);
  const exampleOf = (key: string): unknown =>
    (schemas[refOf(`http/responses.json#${key}`).slice(SCHEMA_PREFIX.length)]?.['examples'] as unknown[] | undefined)?.[0];
  const json = (schema: JsonObject, example?: unknown): JsonObject => ({
    [JSON_TYPE]: { schema, ...(example === undefined ? {} : { example }) },
  });

  /**
   * A request body: the file's schema, and what the gateway checks in a second step (the items of
   * products against product.json, inventory lines against the lines schema of the body's mode).
   */
  const requestBody = (file: string, ...then: JsonObject[]): JsonObject => (then.length === 0 ? s(file) : { allOf: [s(file), ...then] });
  const byMode = (absolute: string, delta: string): JsonObject => ({
    if: { properties: { mode: { const: 'delta' } }, required: ['mode'] },
    then: s(delta),
    else: s(absolute),
  });

  // D28: the shop's admission budget, on every answer past it (docs/api.md#fair-admission-per-shop).
  const rateLimitHeaders = {
    'RateLimit-Policy': ref('#/components/headers/RateLimitPolicy'),
    RateLimit: ref('#/components/headers/RateLimit'),
  };

  const writeOperation = (spec: WriteSpec): Operation => ({
    tags: [spec.tag],
    summary: spec.summary,
    description: spec.description,
    security: securityOf(spec.platform, spec.scope, spec.retailer),
    parameters: [
      ref('#/components/parameters/Prefer'),
      ...(planned.idempotencyKeyHeader ? [ref('#/components/parameters/IdempotencyKey')] : []),
      ...(planned.dryRunQuery ? [ref('#/components/parameters/DryRun')] : []),
    ],
    requestBody: { required: true, content: json(spec.body, spec.example) },
    responses: {
      '200': {
        description: 'Applied: the projector result (D6).',
        headers: {
          ...(planned.idempotencyKeyHeader ? { 'Idempotent-Replayed': ref('#/components/headers/IdempotentReplayed') } : {}),
          ...rateLimitHeaders,
        },
        content: json(r(spec.ok), exampleOf(spec.ok)),
      },
      '202': response('Accepted'),
      ...writeErrors({ unprocessable: spec.unprocessable, planned }),
    },
  });

  const SHOP = 'demo.myshop.example';
  const LOCATION = '0194f3a2-0000-7000-8000-00000000aa01';
  const levelsLines = byMode('http/inventory-levels.absolute-lines.json', 'http/inventory-levels.delta-lines.json');
  const availableLines = byMode('http/inventory-available.absolute-lines.json', 'http/inventory-available.delta-lines.json');
  const products = { properties: { products: { items: s('http/product.json') } } };

  const writes: Record<string, WriteSpec> = {
    '/api/products/bulk-upsert': {
      tag: 'Products',
      summary: 'Endpoint 1: products bulk upsert (shop in x-shop)',
      description:
        'Upsert by shop + barcode (D7, D10). A bad item is reported in `errors` and does not stop the others. At most 10,000 products.',
      platform: 'cron',
      scope: 'products:write',
      retailer: true,
      body: requestBody('http/products-bulk-upsert.request.json', products),
      example: {
        products: [{ barcode: '4901234567894', product_name: 'Green tea 500ml', brand: 'Acme', current_price: 160, current_cost: 90 }],
      },
      ok: 'productsBulk',
      unprocessable: false,
    },
    '/api/ingest/products': {
      tag: 'Products',
      summary: 'Endpoint 2: products ingest (shop in the body)',
      description: 'The same command as endpoint 1 (D7); the answer adds `errors_count`.',
      platform: 'ingest',
      scope: 'products:write',
      retailer: true,
      body: requestBody('http/products-ingest.request.json', products),
      example: { shop: SHOP, products: [{ barcode: '4901234567894', product_name: 'Green tea 500ml', current_price: 150 }] },
      ok: 'productsIngest',
      unprocessable: false,
    },
    '/api/inventory-levels/bulk-upsert': {
      tag: 'Inventory',
      summary: 'Endpoint 3: inventory levels bulk upsert (D17)',
      description:
        'Each line names its own location. `absolute` lines set any of the five quantities; `delta` lines add `<quantity>_delta`. Results below 0 are stored as 0 (`clamped`). A level moving from above 0 to 0 emits `stock_zero` (D18). A bad line is 422 `invalid_payload`.',
      platform: 'ingest',
      scope: 'inventory:write',
      retailer: true,
      body: requestBody('http/inventory-levels.request.json', levelsLines),
      example: {
        shop: SHOP,
        source_system: 'wms',
        mode: 'delta',
        idempotency_key: 'wms-event-8812',
        lines: [{ barcode: '4901234567894', location_id: LOCATION, available_delta: -2 }],
      },
      ok: 'levels',
      unprocessable: true,
    },
    '/api/ingest/inventory-snapshot': {
      tag: 'Inventory',
      summary: 'Endpoint 4: inventory snapshot of one location',
      description: 'Absolute stock of one location (D15, D15a, D15b, D16). Exactly one of `location_id` and `location`.',
      platform: 'ingest',
      scope: 'inventory:write',
      retailer: true,
      body: requestBody('http/inventory-snapshot.request.json', s('http/inventory-snapshot.lines.json')),
      example: {
        shop: SHOP,
        source_system: 'pos',
        location_id: LOCATION,
        inventory_as_of: '2026-11-22T09:00:00+09:00',
        lines: [{ barcode: '4901234567894', on_hand_qty: 12, available_qty: 10 }],
      },
      ok: 'snapshot',
      unprocessable: true,
    },
    '/api/ingest/inventory-available': {
      tag: 'Inventory',
      summary: 'Endpoint 5: available quantity, absolute or delta',
      description: 'Only `available_qty` changes. Delta requests with an `idempotency_key` already applied change nothing (D19).',
      platform: 'ingest',
      scope: 'inventory:write',
      retailer: true,
      body: requestBody('http/inventory-available.request.json', availableLines),
      example: {
        shop: SHOP,
        source_system: 'ec',
        mode: 'absolute',
        location: { identifier_type: 'pos_store_code', identifier_value: 'S-001' },
        lines: [{ barcode: '4901234567894', available_qty: 7 }],
      },
      ok: 'available',
      unprocessable: true,
    },
    '/api/order-line-master/bulk-upsert': {
      tag: 'Order lines',
      summary: 'Endpoint 6: order lines bulk upsert',
      description:
        'Rows are checked one by one (D20); rejected rows are listed in `errors` with HTTP 200. At most 5,000 rows. `dry_run` checks everything and writes nothing (D22).',
      platform: 'ingest',
      scope: 'orders:write',
      retailer: true,
      body: requestBody('http/order-lines.request.json', { properties: { rows: { items: s('http/order-line.json') } } }),
      example: {
        shop: SHOP,
        change_source: 'pos-sync',
        rows: [((schemas['OrderLineRow']?.['examples'] as unknown[] | undefined) ?? [])[0]],
      },
      ok: 'orderLines',
      unprocessable: false,
    },
    '/api/admin/locations': {
      tag: 'Registry',
      summary: 'Register locations (D14)',
      description: 'An omitted `location_id` is chosen by the gateway. An id of another shop is 422 `invalid_payload`.',
      platform: 'ingest',
      scope: 'registry:write',
      retailer: true,
      body: s('http/admin-locations.request.json'),
      example: {
        shop: SHOP,
        locations: [{ name: 'Store', identifiers: [{ identifier_type: 'pos_store_code', identifier_value: 'S-001' }] }],
      },
      ok: 'locations',
      unprocessable: true,
    },
    '/api/admin/channels': {
      tag: 'Registry',
      summary: 'Register channels (D14)',
      description: 'An omitted `channel_id` is chosen by the gateway. An id of another shop is 422 `invalid_payload`.',
      platform: 'ingest',
      scope: 'registry:write',
      retailer: true,
      body: s('http/admin-channels.request.json'),
      example: { shop: SHOP, channels: [{ name: 'Online store' }] },
      ok: 'channels',
      unprocessable: true,
    },
    '/api/admin/daily-snapshot': {
      tag: 'Registry',
      summary: 'Run the daily inventory copy for one shop and date (D16)',
      description:
        'The command the daily scheduler appends. `snapshot_date` defaults to the business day that ended last; a date after today is 422.',
      platform: 'ingest',
      scope: null,
      retailer: false,
      body: s('http/admin-daily-snapshot.request.json'),
      example: { shop: SHOP, snapshot_date: '2026-11-22' },
      ok: 'daily',
      unprocessable: true,
    },
  };

  const paths: Record<string, JsonObject> = {};
  for (const [path, spec] of Object.entries(writes))
    paths[path] = { post: { operationId: operationId('post', path), ...writeOperation(spec) } };

  paths['/api/commands/{id}'] = {
    get: {
      tags: ['Commands'],
      operationId: 'getCommandResult',
      summary: 'The result of an accepted command (D6)',
      description:
        "The status and body the synchronous answer would have had, 202 while pending or parked, 410 once the result was pruned (RESULT_RETENTION). Accepts the ingest secret, the cron secret with the command's shop in `x-shop`, or a per-shop key with `commands:read` (D28), to which another shop's command is 404.",
      security: securityOf('ingest-or-cron', 'commands:read', true),
      parameters: [
        {
          name: 'id',
          in: 'path',
          required: true,
          description: 'The `command_id` of a 202 answer.',
          schema: { type: 'string', format: 'uuid' },
          example: '0194f3a2-5c1e-7d4b-9a6f-2b8c4d6e8f01',
        },
      ],
      responses: {
        '200': {
          description: 'Applied: the body of the endpoint that accepted it.',
          content: json({ anyOf: Object.values(writes).map((w) => r(w.ok)) }, exampleOf('productsIngest')),
        },
        '202': {
          description: 'Pending, or parked for an operator.',
          content: json({ oneOf: [r('pending'), r('parked')] }, exampleOf('pending')),
        },
        '400': response('BadRequest'),
        '401': response('Unauthorized'),
        '403': response('Forbidden'),
        '404': response('NotFound'),
        '410': {
          description: 'The result was pruned: it is kept for RESULT_RETENTION.',
          content: json(r('expired'), exampleOf('expired')),
        },
        '422': response('Unprocessable'),
        '503': response('Unavailable'),
      },
    },
  };

  // D28: the platform credential mints, lists and revokes per-shop keys.
  const keysErrors = {
    '401': response('Unauthorized'),
    '403': response('Forbidden'),
    '503': response('Unavailable'),
  };
  paths['/api/admin/keys'] = {
    post: {
      tags: ['Keys'],
      operationId: 'createApiKey',
      summary: 'Mint a per-shop API key (D28)',
      description:
        'The key is in this answer only (`Cache-Control: no-store`); it is stored as a keyed hash (HMAC-SHA-256 with API_KEY_PEPPER). Without API_KEY_PEPPER the keys endpoints answer 503.',
      security: securityOf('ingest', null, false),
      requestBody: {
        required: true,
        content: json(s('http/admin-keys.request.json'), {
          shop: SHOP,
          scopes: ['inventory:write', 'commands:read'],
          expires_in_days: 365,
          note: 'WMS integration',
        }),
      },
      responses: {
        '201': { description: 'Minted.', content: json(r('keyCreated'), exampleOf('keyCreated')) },
        '400': response('BadRequest'),
        // The body is read as every body is (edge/body.ts), within 16 KiB.
        '413': response('TooLarge'),
        '415': response('UnsupportedEncoding'),
        ...keysErrors,
      },
    },
    get: {
      tags: ['Keys'],
      operationId: 'listApiKeys',
      summary: 'List keys, of one shop or of all, in creation order (D28)',
      description: 'Never the key or its hash. `last_used_at` is written by the gateways in batches, a few seconds behind.',
      security: securityOf('ingest', null, false),
      parameters: [
        {
          name: 'shop',
          in: 'query',
          required: false,
          description: 'Only the keys of this shop.',
          schema: { type: 'string', minLength: 1, maxLength: 255, pattern: NUL_FREE },
          example: SHOP,
        },
      ],
      responses: {
        '200': { description: 'The keys.', content: json(r('keyList'), exampleOf('keyList')) },
        '400': response('BadRequest'),
        ...keysErrors,
      },
    },
  };
  paths['/api/admin/keys/{key_id}'] = {
    delete: {
      tags: ['Keys'],
      operationId: 'revokeApiKey',
      summary: 'Revoke a key (D28)',
      description: 'Effective on every gateway within a second. Revoking a revoked key answers 200 with its first revocation time.',
      security: securityOf('ingest', null, false),
      parameters: [
        {
          name: 'key_id',
          in: 'path',
          required: true,
          schema: { type: 'string', pattern: '^key_[0-9a-f]{16}$' },
          example: 'key_3f9a1c0b7d2e4f68',
        },
      ],
      responses: {
        '200': { description: 'Revoked.', content: json(r('keyRevoked'), exampleOf('keyRevoked')) },
        '404': response('NotFound'),
        ...keysErrors,
      },
    },
  };
  Object.assign(paths, operatorPaths({ s, r, exampleOf, json, response }));

  const open = (summary: string, content: JsonObject, extra: JsonObject = {}): JsonObject => ({
    tags: ['Operations'],
    summary,
    security: [],
    responses: { '200': { description: summary, content }, ...extra },
  });
  paths['/healthz'] = { get: { operationId: 'healthz', ...open('Liveness', json(r('health'), exampleOf('health'))) } };
  paths['/readyz'] = {
    get: {
      operationId: 'readyz',
      ...open('Readiness', json(r('ready'), exampleOf('ready')), {
        '503': { description: 'A dependency is not reachable.', content: json(r('ready')) },
      }),
    },
  };
  if (opts.metricsOnApiPort !== false)
    paths['/metrics'] = {
      get: { operationId: 'metrics', ...open('Prometheus metrics', { 'text/plain': { schema: { type: 'string' } } }) },
    };

  const docs = (summary: string, content: JsonObject, extra: JsonObject = {}): JsonObject => ({
    ...open(summary, content, extra),
    tags: ['API contracts'],
  });
  paths['/openapi.json'] = { get: { operationId: 'openapi', ...docs('This document (OpenAPI 3.1)', json({ type: 'object' })) } };
  paths['/asyncapi.json'] = { get: { operationId: 'asyncapi', ...docs('The topics: AsyncAPI 3.0', json({ type: 'object' })) } };
  paths['/docs'] = {
    get: {
      operationId: 'docs',
      ...docs('This document as a page (Swagger UI, served locally)', { 'text/html': { schema: { type: 'string' } } }),
    },
  };
  paths['/docs/{asset}'] = {
    get: {
      operationId: 'docsAsset',
      ...docs(
        'A file of the documentation page',
        {
          'text/css': { schema: { type: 'string' } },
          'text/javascript': { schema: { type: 'string' } },
          'image/png': { schema: { type: 'string', contentMediaType: 'image/png' } },
          'application/octet-stream': { schema: { type: 'string' } },
        },
        { '404': response('NotFound') },
      ),
      parameters: [{ name: 'asset', in: 'path', required: true, schema: { type: 'string' }, example: 'swagger-ui.css' }],
    },
  };
  paths['/schemas/{group}/{file}'] = {
    get: {
      operationId: 'schema',
      ...docs(
        'A JSON Schema of schemas/ (its `$id` is this URL)',
        { 'application/schema+json': { schema: { type: 'object' } } },
        { '404': response('NotFound') },
      ),
      description: `The schemas the gateway validates with and events name in \`dataschema\`, e.g. ${schemaUrl(opts.publicBaseUrl, 'events/stock-level-event.json')}.`,
      parameters: [
        { name: 'group', in: 'path', required: true, schema: { enum: ['http', 'commands', 'events'] }, example: 'events' },
        {
          name: 'file',
          in: 'path',
          required: true,
          schema: { type: 'string', pattern: '^[a-z0-9.-]+\\.json$' },
          example: 'stock-level-event.json',
        },
      ],
    },
  };

  // D12: answered 410 for every method, with or without credentials.
  for (const path of ['/rest/v1/external_signals', '/api/pixel-events']) {
    const removed: JsonObject = {};
    for (const method of REMOVED_METHODS) {
      removed[method] = {
        tags: ['Removed'],
        operationId: operationId(method, path),
        summary: 'Removed in v2 (D12)',
        deprecated: true,
        security: [],
        responses: { '410': response('Removed') },
      };
    }
    paths[path] = removed;
  }

  // RFC 9110 §15.5.6: a path of this document asked with a method it does not list is 405 with Allow.
  for (const item of Object.values(paths))
    for (const op of Object.values(item) as JsonObject[]) {
      if ((op['tags'] as string[]).includes('Removed')) continue;
      const responses = { ...(op['responses'] as JsonObject), '405': response('MethodNotAllowed') };
      op['responses'] = Object.fromEntries(Object.entries(responses).sort(([a], [b]) => a.localeCompare(b)));
    }

  // Every error answer names its code (errorCodes.ts) in X-Error-Code: those of its status are listed.
  const codesOf = (status: number): string => {
    const codes = Object.entries(ERROR_CODES)
      .filter(([, d]) => d.status === status)
      .map(([c]) => `\`${c}\``);
    return codes.length ? ` \`${ERROR_CODE_HEADER}\`: ${codes.join(', ')}.` : '';
  };
  const errorCode = { [ERROR_CODE_HEADER]: ref('#/components/headers/ErrorCode') };
  const error = (description: string, example: unknown, headers?: JsonObject, status?: number): JsonObject => ({
    description: `${description}${status ? codesOf(status) : ''}`,
    headers: { ...errorCode, ...(headers ?? {}) },
    content: json(r('error'), example),
  });
  const retryAfter = { 'Retry-After': ref('#/components/headers/RetryAfter') };

  return {
    openapi: '3.1.0',
    info: {
      title: 'Retail ingestion API',
      version: opts.version ?? '0.1.0',
      summary: 'Push-only ingestion of products, inventory and order lines.',
      description: `Every write is a command appended to the command log (key: shop) and applied once by the projector (D1, D4). The answer is the projector's result, or 202 with a URL to poll (D6). Bodies are the JSON Schemas served under ${opts.publicBaseUrl}/schemas/, with what the gateway checks beyond them (strings without NUL, exactly one location form, a date-time form both of its readers take). A path asked with a method it does not list is 405 with Allow; OPTIONS is 204 with Allow. Events: ${opts.publicBaseUrl}/asyncapi.json.`,
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
    },
    servers: [{ url: opts.publicBaseUrl }],
    tags: Object.entries(TAGS).map(([name, description]) => ({ name, description })),
    paths,
    components: {
      schemas,
      securitySchemes: {
        // Alternatives, one per security requirement of an operation (requireAccess): the platform's
        // shared secrets, or a per-shop key (D28); the cron secret only with its shop in x-shop (D8).
        ingestSecret: {
          type: 'apiKey',
          in: 'header',
          name: 'x-ingest-secret',
          description:
            'INGEST_SECRET (a comma-separated list of active secrets, D9): the platform credential, for every shop. Not set on the gateway: 503 `INGEST_SECRET not configured`.',
        },
        cronSecret: {
          type: 'apiKey',
          in: 'header',
          name: 'x-cron-secret',
          description: 'CRON_SECRET (D8, D9): the platform credential of endpoint 1, always sent with `cronShop` (the shop in `x-shop`).',
        },
        cronShop: {
          type: 'apiKey',
          in: 'header',
          name: 'x-shop',
          description:
            "With `cronSecret`: the shop the request is for, 1 to 255 characters once trimmed (else 400 `x-shop header required`). With a per-shop key it may be sent, and must then name the key's shop (else 403).",
        },
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          description:
            'A per-shop API key (D28), minted with `POST /api/admin/keys`: it stands for its shop (a body `shop` or `x-shop` naming another is 403) and allows what its scopes name (the scope each operation needs is listed with it).',
        },
      },
      parameters: {
        Prefer: {
          name: 'Prefer',
          in: 'header',
          required: false,
          description: '`respond-async`: answer 202 at once with the command id instead of waiting for the result (D6).',
          schema: { type: 'string' },
          example: 'respond-async',
        },
        ...(planned.idempotencyKeyHeader
          ? {
              IdempotencyKey: {
                name: 'Idempotency-Key',
                in: 'header',
                required: false,
                description:
                  'A key per logical request: a resend with the same key and body is answered with the first result. Printable ASCII, 1 to 255 characters (a structured-field string `"…"` is read without its quotes, so `""` is empty).',
                // commands/idempotency.ts: printable ASCII; a field value has no space at its ends (RFC 9110 §5.5).
                schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^(?!""$)[!-~]([ -~]*[!-~])?$' },
              },
            }
          : {}),
        ...(planned.dryRunQuery
          ? {
              DryRun: {
                name: 'dry_run',
                in: 'query',
                required: false,
                description:
                  '`true`: check and compute the answer, write nothing; the answer carries `dry_run: true` and `as_of` (D22). `false`, or none: the real thing. Any other value is 400.',
                // gateway commands/submit.ts dryRunRequested: these two words only.
                schema: { type: 'string', enum: ['true', 'false'] },
              },
            }
          : {}),
      },
      headers: {
        RateLimitPolicy: {
          description:
            'The shop\'s admission budgets (IETF draft-ietf-httpapi-ratelimit-headers, a Structured Fields list): `"inflight"` requests in flight at once (`qu="concurrency"`), and with SHOP_RATE_LINES_PER_S `"lines"`, `q` lines per `w` seconds across every gateway (`qu="line"`). Present on write answers once the shop was admitted, and on its 429s.',
          schema: { type: 'string' },
          example: '"inflight";q=256;qu="concurrency", "lines";q=50000;w=50;qu="line"',
        },
        RateLimit: {
          description:
            'What is left of each policy of RateLimit-Policy: `r` remaining (this request counted), `t` seconds until the lines bucket is full.',
          schema: { type: 'string' },
          example: '"inflight";r=255, "lines";r=49900;t=1',
        },
        RetryAfter: { description: 'Seconds to wait before sending again.', schema: { type: 'integer', minimum: 0 }, example: 5 },
        ErrorCode: {
          description:
            "The stable code of an error answer (the body keeps the spec's shape; a client branches on this, not on the message). Codes are added, never renamed or reused.",
          schema: { type: 'string', enum: Object.keys(ERROR_CODES) },
          example: 'invalid_request',
        },
        ...(planned.idempotencyKeyHeader
          ? {
              IdempotentReplayed: {
                description: '`true` when the answer is the stored first result of this Idempotency-Key.',
                schema: { type: 'string', enum: ['true'] },
              },
            }
          : {}),
      },
      responses: {
        Accepted: {
          description:
            'Accepted and in the log; not applied within REPLY_TIMEOUT_MS, or `Prefer: respond-async` was sent (D6). Parked when the command is waiting for an operator.',
          headers: {
            'Preference-Applied': { description: '`respond-async` when asked for.', schema: { type: 'string' } },
            ...rateLimitHeaders,
          },
          content: json({ oneOf: [r('accepted'), r('parked')] }, exampleOf('accepted')),
        },
        BadRequest: error(
          'The body or a header is malformed (D11): not JSON, not an object, a missing or wrongly typed top-level field, an unknown field (D27), a batch over its limit.',
          { ok: false, error: 'shop required' },
          undefined,
          400,
        ),
        Unauthorized: {
          description: `Missing or wrong secret (spec Authentication rule 1, D8), or a missing, unknown, expired or revoked key (D28).${codesOf(401)}`,
          headers: {
            ...errorCode,
            'WWW-Authenticate': { description: '`Bearer` (RFC 9110 §11.6.1).', schema: { type: 'string' }, example: 'Bearer' },
          },
          content: { 'text/plain': { schema: { const: 'unauthorized' }, example: 'unauthorized' } },
        },
        Forbidden: error(
          'A per-shop key used outside what it may do (D28): another shop in the body `shop` or `x-shop`, a scope the key lacks (named in the error), or an endpoint for the platform credential only.',
          { ok: false, error: 'forbidden for this shop' },
          undefined,
          403,
        ),
        NotFound: error(
          'No such route or command (or, for the operator API, no open parked command).',
          { ok: false, error: 'command not found' },
          undefined,
          404,
        ),
        MethodNotAllowed: error(
          'The path does not answer this method (RFC 9110 §15.5.6); `Allow` lists the methods it does. HEAD is answered wherever GET is, and OPTIONS on a path of this document answers 204 with `Allow` (no CORS: the API is for servers).',
          { ok: false, error: 'method PUT not allowed on /api/ingest/products; allowed: POST, OPTIONS' },
          {
            Allow: {
              description: 'The methods of the path (RFC 9110 §10.2.1).',
              required: true,
              schema: { type: 'string' },
              example: 'POST, OPTIONS',
            },
          },
          405,
        ),
        BodyTimeout: error('The body did not arrive within BODY_TIMEOUT.', { ok: false, error: 'request body timeout' }, undefined, 408),
        TooLarge: error(
          'The body is over BODY_LIMIT_BYTES (D11), or too large for the command log.',
          { ok: false, error: 'request body too large' },
          undefined,
          413,
        ),
        UnsupportedEncoding: error(
          'A Content-Encoding or charset the gateway does not read.',
          { ok: false, error: 'unsupported content encoding' },
          undefined,
          415,
        ),
        Unprocessable: {
          description: `Refused with a kind (D11, D14): a bad line, an unresolved or ambiguous location, a date out of range. Nothing was changed. The kind is also the code.${codesOf(422)}`,
          headers: errorCode,
          content: json(r('payloadError'), exampleOf('payloadError')),
        },
        TooManyRequests: error(
          `Over the in-flight bytes or the projector backlog (D13)${planned.perShopRateLimit ? ', or this shop over its own budget (requests or bytes in flight, lines per second; `shop_over_budget`, other shops are served)' : ''}: send again after Retry-After.`,
          { ok: false, error: 'too many requests in flight; retry later' },
          { ...retryAfter, ...rateLimitHeaders },
          429,
        ),
        Unavailable: error(
          'A dependency is down (503 with Retry-After: Kafka, PostgreSQL), or the secret of this endpoint is not configured (no Retry-After).',
          { ok: false, error: 'command log unavailable; retry later' },
          retryAfter,
          503,
        ),
        Removed: error('Removed in v2 (D12).', { ok: false, error: 'removed in v2' }, undefined, 410),
        ...(planned.idempotencyKeyHeader
          ? {
              IdempotencyConflict: error(
                'A request with this Idempotency-Key is still in progress.',
                { ok: false, error: 'a request with this Idempotency-Key is still in flight; retry later' },
                retryAfter,
                409,
              ),
            }
          : {}),
      },
    },
  };
}

const TAGS: Record<string, string> = {
  Products: 'Endpoints 1 and 2 of the spec (D7, D10).',
  Inventory: 'Endpoints 3, 4 and 5 (D14 to D19).',
  'Order lines': 'Endpoint 6 (D20 to D23).',
  Registry: 'Locations, channels and the daily inventory copy (D14, D16).',
  Commands: 'Results of accepted commands (D6).',
  Keys: 'Per-shop API keys (D28): minted, listed and revoked with the platform credential.',
  [OPERATOR_TAG]: OPERATOR_TAG_DESCRIPTION,
  Operations: 'Health, readiness and metrics; no credentials.',
  'API contracts': 'These documents, the documentation page and the JSON Schemas; no credentials.',
  Removed: 'Interfaces removed in v2 (D12).',
};

/** The methods a removed path is documented for: it answers 410 to any. */
export const REMOVED_METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

/** `post /api/ingest/products` -> `postApiIngestProducts`. */
function operationId(method: string, path: string): string {
  return (
    method +
    path
      .split(/[^A-Za-z0-9]+/)
      .filter(Boolean)
      .map((w) => w[0]?.toUpperCase() + w.slice(1))
      .join('')
  );
}
