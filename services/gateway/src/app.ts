import express, { type Express, type RequestHandler } from 'express';
import type { KeyService } from '@ingest/access';
import type { SchemaRegistry } from '@ingest/contracts';
import type { Pool } from '@ingest/db';
import { DEFAULT_TOPICS, topicPlan, type CommandLog, type LogPositions, type TopicNames } from '@ingest/kafka';
import { publicBaseUrl, type Logger, type Registry } from '@ingest/runtime';
import type { GatewayConfig } from './config.ts';
import { errorHandler, notFound, SAFE_HEADERS } from './errors/catalog.ts';
import { inflightLimiter } from './edge/inflight.ts';
import { ingestCredential, principalOf, type AccessConfig } from './edge/auth.ts';
import { answerOptions, methodNotAllowed, routeMethods } from './edge/methods.ts';
import { shedShop } from './edge/shedShop.ts';
import { shopAdmission, type SharedRateBuckets } from './edge/shopAdmission.ts';
import { countRequest, gatewayMetrics } from './metrics.ts';
import type { ReplyWaiter } from './commands/replies.ts';
import type { DryRunner } from './commands/dryRun.ts';
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
import { defaultIds } from './commands/submit.ts';

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
  // authentication and header checks (commands/intake.ts), so an unauthenticated request never holds it.
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
  // raw bodies, without the trip through the app (edge/shedShop.ts); everything else passes unchanged.
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
