import express, { type Express, type RequestHandler } from 'express';
import type { SchemaRegistry } from '@ingest/contracts';
import type { Pool } from '@ingest/db';
import type { CommandLog } from '@ingest/kafka';
import type { Logger, Registry } from '@ingest/runtime';
import type { GatewayConfig } from './config.ts';
import { errorHandler, notFound, SAFE_HEADERS } from './errors.ts';
import { inflightLimiter } from './inflight.ts';
import { gatewayMetrics } from './metrics.ts';
import type { ReplyWaiter } from './replies.ts';
import { commandRoutes } from './routes/commands.ts';
import { healthRoutes } from './routes/health.ts';
import { adminRoutes } from './routes/admin.ts';
import { inventoryRoutes } from './routes/inventory.ts';
import { orderLineRoutes } from './routes/orderLines.ts';
import { productRoutes } from './routes/products.ts';
import { removedRoutes } from './routes/removed.ts';
import { defaultIds } from './submit.ts';

export interface GatewayDeps {
  config: GatewayConfig;
  schemas: SchemaRegistry;
  commandLog: CommandLog;
  replies: ReplyWaiter;
  pool: Pool;
  log: Logger;
  registry: Registry;
  isReady?: () => Promise<Record<string, boolean>>;
  /** The projector's backlog (D13); without it only in-flight bytes bound the intake. */
  backlog?: { lag(): number | null };
  now?: () => Date;
  newId?: () => string;
}

/** The gateway app (STYLE.md): no listen, no process.env; main.ts wires the real parts. */
export function buildApp(deps: GatewayDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  const metrics = gatewayMetrics(deps.registry);
  const { config } = deps;

  app.use((_req, res, next) => {
    res.set(SAFE_HEADERS);
    next();
  });
  app.use(observe(metrics));
  app.use(healthRoutes({ registry: deps.registry, isReady: deps.isReady ?? (async () => ({ ready: true })) }));
  app.use(removedRoutes());

  const submit = {
    commandLog: deps.commandLog,
    replies: deps.replies,
    pool: deps.pool,
    log: deps.log,
    metrics,
    replyTimeoutMs: config.replyTimeoutMs,
    resendWindowMs: config.resendWindowMs,
    now: deps.now ?? defaultIds.now,
    newId: deps.newId ?? defaultIds.newId,
  };
  app.use(
    commandRoutes({ pool: deps.pool, ingestSecrets: config.ingestSecrets, cronSecrets: config.cronSecrets, resultRetentionMs: config.resultRetentionMs }),
  );
  // One in-flight budget (D13) for every write route; each route admits only after its own
  // authentication and header checks (intake.ts), so an unauthenticated request never holds it.
  const admission = inflightLimiter(config.maxInflightBytes, deps.backlog ? { lag: () => deps.backlog?.lag() ?? null, max: config.maxConsumerLag } : null);
  // A body over one connection's share of the budget could never be admitted: it is too large.
  const front = { admission, bodyLimitBytes: Math.min(config.bodyLimitBytes, admission.perConnectionBytes), bodyTimeoutMs: config.bodyTimeoutMs };
  app.use(productRoutes({ ...submit, ...front, schemas: deps.schemas, ingestSecrets: config.ingestSecrets, cronSecrets: config.cronSecrets }));
  const ingest = { ...submit, ...front, schemas: deps.schemas, ingestSecrets: config.ingestSecrets };
  app.use(inventoryRoutes({ ...ingest, businessTimezone: config.businessTimezone }));
  app.use(adminRoutes({ ...ingest, businessTimezone: config.businessTimezone }));
  app.use(orderLineRoutes(ingest));

  app.use((req, _res, next) => next(notFound(`no route for ${req.method} ${req.path}`)));
  app.use(errorHandler(deps.log));
  return app;
}

function observe(metrics: ReturnType<typeof gatewayMetrics>): RequestHandler {
  return (req, res, next) => {
    const started = performance.now();
    res.once('finish', () => {
      // The matched route pattern, or one shared label for everything else whatever its status
      // (404s, Express's automatic OPTIONS answer, malformed URLs): a hostile URL adds no series.
      const pattern = (req.route as { path?: unknown } | undefined)?.path;
      const route = typeof pattern === 'string' ? pattern : 'unmatched';
      metrics.requests.inc({ method: req.method, route, status: String(res.statusCode) });
      metrics.latency.observe({ method: req.method, route }, (performance.now() - started) / 1000);
    });
    next();
  };
}
