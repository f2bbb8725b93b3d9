import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Router } from 'express';
import {
  buildAsyncApi,
  buildOpenApi,
  publishedSchema,
  readSchemaFiles,
  type AsyncApiOptions,
  type JsonObject,
  type SchemaFile,
} from '@ingest/contracts';
import { CLOUDEVENTS_SOURCE, EVENT_DATA_SCHEMAS } from '@ingest/domain';
import { notFound } from '../errors/catalog.ts';

export interface DocsDeps {
  /** PUBLIC_BASE_URL; a function, as the default is the listen address, known once the gateway listens. */
  publicBaseUrl: () => string;
  /** The topics as created (packages/kafka topicPlan), for the AsyncAPI document. */
  topics: AsyncApiOptions['topics'];
  files?: SchemaFile[];
  /** False when `/metrics` has a listener of its own (METRICS_PORT): the OpenAPI document then omits it. */
  metricsOnApiPort?: boolean;
  /** PLATFORM_SECRETS_FOR_RETAILERS (D28): false, and the document offers retailer endpoints a per-shop key only, as they are then. */
  platformSecretsForRetailers?: boolean;
}

/** The files of swagger-ui-dist the page loads, served from node_modules: no CDN, works offline. */
const ASSETS = new Set([
  'swagger-ui.css',
  'swagger-ui-bundle.js',
  'swagger-ui-standalone-preset.js',
  'favicon-32x32.png',
  'favicon-16x16.png',
]);
const SWAGGER_UI_DIR = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Retail ingestion API</title>
  <link rel="stylesheet" href="/docs/swagger-ui.css">
  <link rel="icon" type="image/png" href="/docs/favicon-32x32.png" sizes="32x32">
</head>
<body>
  <p style="font-family: sans-serif; margin: 1em 2em">OpenAPI: <a href="/openapi.json">/openapi.json</a> &middot; Topics (AsyncAPI 3.0): <a href="/asyncapi.json">/asyncapi.json</a> &middot; JSON Schemas: /schemas/&lt;http|commands|events&gt;/&lt;file&gt;.json</p>
  <div id="swagger-ui"></div>
  <script src="/docs/swagger-ui-bundle.js"></script>
  <script src="/docs/swagger-ui-standalone-preset.js"></script>
  <script>
    window.ui = SwaggerUIBundle({
      url: '/openapi.json',
      dom_id: '#swagger-ui',
      deepLinking: true,
      validatorUrl: null,
      presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
      layout: 'StandaloneLayout',
    });
  </script>
</body>
</html>
`;

/** The OpenAPI document the gateway serves for a public base URL. */
function openApiAt(deps: DocsDeps, files: SchemaFile[], publicBaseUrl: string): JsonObject {
  return buildOpenApi({
    publicBaseUrl,
    files,
    metricsOnApiPort: deps.metricsOnApiPort !== false,
    platformSecretsForRetailers: deps.platformSecretsForRetailers !== false,
  });
}

/** The AsyncAPI document the gateway serves for a public base URL. */
function asyncApiAt(deps: DocsDeps, files: SchemaFile[], publicBaseUrl: string): JsonObject {
  return buildAsyncApi({
    publicBaseUrl,
    files,
    topics: deps.topics,
    cloudEvents: { source: CLOUDEVENTS_SOURCE, dataSchemas: EVENT_DATA_SCHEMAS },
  });
}

/**
 * Every contract the gateway serves, by its URL path without the leading slash (`openapi.json`,
 * `asyncapi.json`, `schemas/events/stock-level-event.json`), built by the functions its routes use:
 * what `npm run gen` commits to schemas/published/ and `npm test` compares with the last release
 * (docs/api.md#changing-a-published-contract).
 */
export function servedContracts(deps: DocsDeps): Map<string, JsonObject> {
  const files = deps.files ?? readSchemaFiles();
  const base = deps.publicBaseUrl();
  const out = new Map<string, JsonObject>([
    ['openapi.json', openApiAt(deps, files, base)],
    ['asyncapi.json', asyncApiAt(deps, files, base)],
  ]);
  for (const file of files) out.set(`schemas/${file.name}`, publishedSchema(file, base));
  return out;
}

/**
 * The API contracts, unauthenticated and read-only: the OpenAPI and AsyncAPI documents
 * (generated from schemas/ at the first request for a base URL), a page rendering the OpenAPI one,
 * and every JSON Schema of schemas/ at the URL its served `$id` names (events carry it in `dataschema`).
 */
export function docsRoutes(deps: DocsDeps): Router {
  const router = Router();
  const files = deps.files ?? readSchemaFiles();
  const byName = new Map(files.map((f) => [f.name, f]));
  const cached = <T>(make: (base: string) => T): (() => T) => {
    let last: { base: string; value: T } | null = null;
    return () => {
      const base = deps.publicBaseUrl();
      if (last?.base !== base) last = { base, value: make(base) };
      return last.value;
    };
  };
  const openapi = cached((publicBaseUrl) => openApiAt(deps, files, publicBaseUrl));
  const asyncapi = cached((publicBaseUrl) => asyncApiAt(deps, files, publicBaseUrl));

  router.get('/openapi.json', (_req, res) => {
    res.json(openapi());
  });
  router.get('/asyncapi.json', (_req, res) => {
    res.json(asyncapi());
  });
  router.get('/docs', (_req, res) => {
    res.type('html').send(PAGE);
  });
  router.get('/docs/:asset', (req, res) => {
    const asset = String(req.params['asset']);
    if (!ASSETS.has(asset)) throw notFound(`no documentation file ${asset}`);
    // node_modules/.pnpm is a dot directory; the name is one of ASSETS, never a path from the request.
    res.sendFile(join(SWAGGER_UI_DIR, asset), { dotfiles: 'allow' });
  });
  router.get('/schemas/:group/:file', (req, res) => {
    const name = `${String(req.params['group'])}/${String(req.params['file'])}`;
    const file = byName.get(name as SchemaFile['name']);
    if (!file) throw notFound(`no schema ${name}`);
    res.type('application/schema+json').send(JSON.stringify(publishedSchema(file, deps.publicBaseUrl()) satisfies JsonObject, null, 2));
  });
  return router;
}
