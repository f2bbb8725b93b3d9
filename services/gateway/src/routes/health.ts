import { Router } from 'express';
import { readinessProbe, registerReadinessMetric, type ReadinessChecks, type Registry } from '@ingest/runtime';

/**
 * Probes (docs/operations.md "Observability"):
 * - `/healthz` is liveness only: it answers from the event loop and reads no dependency, so a
 *   database or broker outage never gets the process restarted; a wedged loop does not answer it.
 * - `/readyz` is 503 until every readiness check passes and again whenever one fails, naming them.
 */
export function healthRoutes(deps: {
  registry: Registry;
  isReady: () => Promise<ReadinessChecks>;
  readyTimeoutMs?: number;
  readyCacheMs?: number;
  /** False when `/metrics` has a listener of its own (METRICS_PORT); then the API port answers 404 there. */
  metrics?: boolean;
}): Router {
  const router = Router();
  const ready = readinessProbe(deps.isReady, {
    ...(deps.readyTimeoutMs === undefined ? {} : { timeoutMs: deps.readyTimeoutMs }),
    ...(deps.readyCacheMs === undefined ? {} : { cacheMs: deps.readyCacheMs }),
  });
  registerReadinessMetric(deps.registry, ready);
  router.get('/healthz', (_req, res) => {
    res.json({ ok: true });
  });
  router.get('/readyz', async (_req, res) => {
    const { ok, checks } = await ready();
    if (!ok) res.set('Retry-After', '5');
    res.status(ok ? 200 : 503).json({ ok, checks });
  });
  if (deps.metrics !== false)
    router.get('/metrics', async (_req, res) => {
      res.type(deps.registry.contentType).send(await deps.registry.metrics());
    });
  return router;
}
