import { Router } from 'express';
import type { Registry } from '@ingest/runtime';

export function healthRoutes(deps: { registry: Registry; isReady: () => Promise<Record<string, boolean>> }): Router {
  const router = Router();
  router.get('/healthz', (_req, res) => {
    res.json({ ok: true });
  });
  router.get('/readyz', async (_req, res) => {
    const checks = await deps.isReady().catch(() => ({ ready: false }));
    const ok = Object.values(checks).every(Boolean);
    res.status(ok ? 200 : 503).json({ ok, checks });
  });
  router.get('/metrics', async (_req, res) => {
    res.type(deps.registry.contentType).send(await deps.registry.metrics());
  });
  return router;
}
