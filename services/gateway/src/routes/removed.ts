import { Router } from 'express';
import { ERROR_CODE_HEADER } from '../errors/catalog.ts';

/** D12: the v2 release removed these; they answer 410 with or without credentials. */
export function removedRoutes(): Router {
  const router = Router();
  for (const path of ['/rest/v1/external_signals', '/api/pixel-events']) {
    router.all(path, (_req, res) => {
      res.set(ERROR_CODE_HEADER, 'removed').status(410).json({ ok: false, error: 'removed in v2' });
    });
  }
  return router;
}
