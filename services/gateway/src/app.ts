import express, { type Express, type RequestHandler } from 'express';
import type { KeyService } from '@ingest/access';
import type { SchemaRegistry } from '@ingest/contracts';
import type { Pool } from '@ingest/db';
import { DEFAULT_TOPICS, topicPlan, type CommandLog, type LogPositions, type TopicNames } from '@ingest/kafka';
import { publicBaseUrl, type Logger, type Registry } from '@ingest/runtime';
import type { GatewayConfig } from './config.ts';
import { ApiError, errorHandler, notFound, SAFE_HEADERS } from './errors/catalog.ts';
import { inflightLimiter, shedShop } from './edge/intake.ts';
import { ingestCredential, principalOf, type AccessConfig } from './edge/auth.ts';
import { shopAdmission, type SharedRateBuckets } from './edge/shopAdmission.ts';
import { countRequest, gatewayMetrics } from './metrics.ts';
import type { ReplyWaiter } from './commands/replies.ts';
import { defaultIds, type DryRunner } from './commands/submit.ts';
import { commandRoutes } from './routes/commands.ts';
import { docsRoutes, type DocsDeps } from './routes/docs.ts';
import { healthRoutes } from './routes/health.ts';
import { adminRoutes } from './routes/admin.ts';
import { keyRoutes } from './routes/keys.ts';
import { operatorRoutes } from './routes/operator.ts';
import { inventoryRoutes } from './routes/inventory.ts';
import { orderLineRoutes } from './routes/orderLines.ts';
import { productRoutes } from './routes/products.ts';
import { removedRoutes } from './routes/removed.ts';
import { requestContext } from './edge/requestContext.ts';

export interface GatewayDeps {
  config: GatewayConfig;
  schemas: SchemaRegistry;
  commandLog: CommandLog;
  replies: ReplyWaiter;
  /** Dry runs (D22): the command projected and rolled back instead of appended. */
  dryRunner: DryRunner;
  pool: Pool;
  /** The shops' lines/s buckets shared by every gateway (docs/api.md#fair-admission-per-shop); without it each gateway has its own. */
  rateBuckets?: SharedRateBuckets;
  /** Per-shop API keys (D28); without it (API_KEY_PEPPER unset) a Bearer key is 401 and the keys endpoints 503. */
  keys?: KeyService | null;
  log: Logger;
  registry: Registry;
  /** Readiness checks for /readyz (all true: ready); without it the app is always ready. */
  isReady?: () => Promise<Record<string, boolean>>;
  /** How long /readyz waits for the checks (default 2 s) and how long an answer is reused (default 1 s). */
  readiness?: { timeoutMs?: number; cacheMs?: number };
  /** The projector's backlog (D13); without it only in-flight bytes bound the intake. */
  backlog?: { lag(): number | null };
  /** Where commands sit in the log: pending answers of GET /api/commands/{id} say how far they are. */
  positions?: LogPositions;
  now?: () => Date;
  newId?: () => string;
  /** False when METRICS_PORT gives `/metrics` a listener of its own: the API port then does not serve it. */
  metricsOnApiPort?: boolean;
  /** What the API contracts (docs/api.md "API contracts") name: the public base URL and the topics; defaults: the default settings. */
  docs?: DocsDeps;
  /** The topic names: where the operator API's retries write outbox rows and its actions' audit events (default: the default settings). */
  topics?: TopicNames;
}

/** The contracts of a gateway on the default settings (tests, and any wiring that passes none). */
export function defaultDocs(): DocsDeps {
  const [commands, audit, stockZero, stockRestored] = topicPlan(DEFAULT_TOPICS, 6);
  if (!commands || !audit || !stockZero || !stockRestored) throw new Error('topicPlan lists four topics');
  const base = publicBaseUrl({});
  return { publicBaseUrl: () => base, topics: { commands, audit, stockZero, stockRestored } };
}

/** The gateway app (STYLE.md): no listen, no process.env; main.ts wires the real parts. */
export function buildApp(deps: GatewayDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  const metrics = gatewayMetrics(deps.registry);
  const { config } = deps;

  // One in-flight budget (D13) for every write route; each route admits only after its own
  // authentication and header checks (edge/intake.ts), so an unauthenticated request never holds it.
  const admission = inflightLimiter(
    config.maxInflightBytes,
    deps.backlog ? { lag: () => deps.backlog?.lag() ?? null, max: config.maxConsumerLag } : null,
  );
  // A body over one connection's share of the budget could never be admitted: it is too large.
  // Then each shop's own budgets (docs/api.md#fair-admission-per-shop), once the body names the
  // shop: a shop over them gets 429 while the others go on; the global budget above stays the
  // last line for everyone.
  const perShop = shopAdmission(
    {
      maxInflightBytes: config.shopMaxInflightBytes,
      maxInflightRequests: config.shopMaxInflightRequests,
      rateLinesPerS: config.shopRateLinesPerS,
      burstLines: config.shopBurstLines,
    },
    undefined,
    deps.rateBuckets,
  );
  // Before everything while a shop is being refused: its plain writes are answered 429 on their
  // raw bodies, without the trip through the app (edge/intake.ts, shedShop); everything else passes unchanged.
  const access: AccessConfig = {
    ingestSecrets: config.ingestSecrets,
    cronSecrets: config.cronSecrets,
    platformSecretsForRetailers: config.platformSecretsForRetailers,
    keys: deps.keys ?? null,
  };
  // The raw-body path takes the ingest secret only (where it is accepted on every path it serves);
  // a per-shop key's request goes through the app, whose auth also checks its scope and shop.
  const credentialOf = ingestCredential(config.platformSecretsForRetailers ? config.ingestSecrets : []);
  app.use(
    shedShop({
      shopAdmission: perShop,
      admission,
      authenticated: (headers) => credentialOf(headers) !== null,
      bodyLimitBytes: Math.min(config.bodyLimitBytes, admission.perConnectionBytes),
      metrics,
    }),
  );
  // Then the request id and the trace span cover everything after it.
  app.use(requestContext());
  app.use((_req, res, next) => {
    res.set(SAFE_HEADERS);
    next();
  });
  app.use(observe(metrics, deps.log));
  // Which methods each path answers, from the routes mounted below (read at the first request).
  const methodsOf = routeMethods(app);
  app.use(answerOptions(methodsOf));
  app.use(
    healthRoutes({
      registry: deps.registry,
      isReady: deps.isReady ?? (async () => ({ ready: true })),
      ...(deps.readiness?.timeoutMs === undefined ? {} : { readyTimeoutMs: deps.readiness.timeoutMs }),
      ...(deps.readiness?.cacheMs === undefined ? {} : { readyCacheMs: deps.readiness.cacheMs }),
      metrics: deps.metricsOnApiPort !== false,
    }),
  );
  app.use(removedRoutes());
  // The API contracts (docs/api.md "API contracts"), before any route that asks for credentials.
  app.use(
    docsRoutes({
      ...(deps.docs ?? defaultDocs()),
      metricsOnApiPort: deps.metricsOnApiPort !== false,
      platformSecretsForRetailers: config.platformSecretsForRetailers,
    }),
  );

  app.use(keyRoutes({ access, schemas: deps.schemas }));

  const submit = {
    commandLog: deps.commandLog,
    replies: deps.replies,
    dryRunner: deps.dryRunner,
    pool: deps.pool,
    log: deps.log,
    metrics,
    replyTimeoutMs: config.replyTimeoutMs,
    resendWindowMs: config.resendWindowMs,
    idempotencyKeyTtlMs: config.idempotencyKeyTtlMs,
    now: deps.now ?? defaultIds.now,
    newId: deps.newId ?? defaultIds.newId,
  };
  app.use(
    commandRoutes({
      pool: deps.pool,
      access,
      resultRetentionMs: config.resultRetentionMs,
      positions: deps.positions,
      now: submit.now,
    }),
  );
  const front = {
    admission,
    shopAdmission: perShop,
    bodyLimitBytes: Math.min(config.bodyLimitBytes, admission.perConnectionBytes),
    bodyTimeoutMs: config.bodyTimeoutMs,
    access,
  };
  app.use(productRoutes({ ...submit, ...front, schemas: deps.schemas }));
  const ingest = { ...submit, ...front, schemas: deps.schemas };
  app.use(inventoryRoutes({ ...ingest, businessTimezone: config.businessTimezone }));
  app.use(adminRoutes({ ...ingest, businessTimezone: config.businessTimezone }));
  app.use(orderLineRoutes(ingest));
  app.use(
    operatorRoutes({
      pool: deps.pool,
      schemas: deps.schemas,
      topics: deps.topics ?? DEFAULT_TOPICS,
      access,
      bodyTimeoutMs: config.bodyTimeoutMs,
      now: submit.now,
    }),
  );

  app.use(methodNotAllowed(methodsOf));
  app.use((req, _res, next) => next(notFound(`no route for ${req.method} ${req.path}`)));
  app.use(errorHandler(deps.log));
  return app;
}

function observe(metrics: ReturnType<typeof gatewayMetrics>, log: Logger): RequestHandler {
  return (req, res, next) => {
    const started = performance.now();
    res.once('finish', () => {
      // The matched route pattern, or one shared label for everything else whatever its status
      // (404s, 405s, OPTIONS answers, malformed URLs): a hostile URL adds no series.
      const pattern = (req.route as { path?: unknown } | undefined)?.path;
      const route = typeof pattern === 'string' ? pattern : 'unmatched';
      countRequest(metrics, req.method, route, res.statusCode, started);
      // One line per request at LOG_LEVEL=debug, naming who sent it (D28: a key id, or platform)
      // and never its credential; at info and above it costs a level check.
      if (log.isLevelEnabled('debug'))
        log.debug(
          {
            request_id: res.getHeader('x-request-id'),
            method: req.method,
            route,
            status: res.statusCode,
            ms: Math.round((performance.now() - started) * 10) / 10,
            ...(res.locals['credential'] ? { actor: principalOf(res).actor } : {}),
            ...(typeof res.locals['shop'] === 'string' ? { shop: res.locals['shop'] } : {}),
          },
          'request',
        );
    });
    next();
  };
}

// --- The methods of each path, from the route table above: OPTIONS and 405 (RFC 9110) ---

/**
 * The methods each path of the app answers, read from express's own route table (the routers
 * buildApp mounted), so the answers below follow the routes as they are: `Allow` lists a path's
 * methods, HEAD wherever GET is served (express answers it with the GET route) and OPTIONS.
 */
export type MethodsOf = (path: string) => readonly string[] | null;

interface Layer {
  slash?: boolean;
  route?: { path: unknown; methods: Record<string, boolean> };
  handle?: { stack?: Layer[] };
}

// RFC 9110 §9: the methods in the order Allow lists them.
const ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/** `/api/commands/:id` -> a matcher with express's defaults: case-insensitive, an optional trailing slash. */
function matcherOf(path: string): RegExp {
  if (!/^(\/([A-Za-z0-9._-]+|:[A-Za-z_]\w*))+$/.test(path))
    throw new Error(`routeMethods reads literal and :param segments only, not ${path}`);
  const body = path
    .split('/')
    .slice(1)
    .map((seg) => (seg.startsWith(':') ? '[^/]+' : seg.replace(/\./g, '\\.')))
    .join('/');
  return new RegExp(`^/${body}/?$`, 'i');
}

/** The route table of an app whose routers are all mounted at `/` (buildApp's); built at its first use, once every route exists. */
export function routeMethods(app: Express): MethodsOf {
  let table: Array<{ match: RegExp; methods: string[] }> | null = null;
  const build = (): Array<{ match: RegExp; methods: string[] }> => {
    const byPath = new Map<string, Set<string>>();
    const walk = (stack: Layer[]): void => {
      for (const layer of stack) {
        if (layer.route && typeof layer.route.path === 'string') {
          // router.all answers every method itself (the removed interfaces, D12): nothing to add.
          if (layer.route.methods['_all']) continue;
          const methods = byPath.get(layer.route.path) ?? new Set<string>();
          for (const m of Object.keys(layer.route.methods)) methods.add(m.toUpperCase());
          byPath.set(layer.route.path, methods);
        } else if (layer.handle?.stack) {
          if (!layer.slash) throw new Error('routeMethods reads routers mounted at / only');
          walk(layer.handle.stack);
        }
      }
    };
    walk((app as unknown as { router: { stack: Layer[] } }).router.stack);
    return [...byPath].map(([path, methods]) => {
      if (methods.has('GET')) methods.add('HEAD');
      methods.add('OPTIONS');
      return { match: matcherOf(path), methods: ORDER.filter((m) => methods.has(m)) };
    });
  };
  return (path) => {
    table ??= build();
    const found = table.filter((r) => r.match.test(path));
    if (found.length === 0) return null;
    const all = new Set(found.flatMap((r) => r.methods));
    return ORDER.filter((m) => all.has(m));
  };
}

/**
 * OPTIONS on a path the gateway serves (RFC 9110 §9.3.7): 204 with `Allow`, and no CORS headers:
 * the API is for servers, its secrets are never in a browser (spec "Authentication"). An unknown
 * path goes on to the 404 of D11. Mounted before the routers, whose automatic answer it replaces.
 */
export function answerOptions(methodsOf: MethodsOf): RequestHandler {
  return (req, res, next) => {
    if (req.method !== 'OPTIONS') return next();
    const allowed = methodsOf(req.path);
    if (!allowed) return next();
    res.set('Allow', allowed.join(', ')).status(204).end();
  };
}

/**
 * A known path asked with a method it does not serve: 405 with `Allow` (RFC 9110 §15.5.6), in the
 * error shape of every refusal; an unknown path stays 404 (D11). Mounted after every router: no
 * route took the request, so no credential was asked for and none is needed for this answer.
 */
export function methodNotAllowed(methodsOf: MethodsOf): RequestHandler {
  return (req, _res, next) => {
    const allowed = methodsOf(req.path);
    if (!allowed || allowed.includes(req.method)) return next();
    const allow = allowed.join(', ');
    next(
      new ApiError(
        405,
        'method_not_allowed',
        { ok: false, error: `method ${req.method} not allowed on ${req.path}; allowed: ${allow}` },
        { Allow: allow },
      ),
    );
  };
}
