import { Router } from 'express';
import type { Pool } from '@ingest/db';
import { isUuid } from '@ingest/domain';
import { secretMatches } from '../auth.ts';
import { badRequest, notConfigured, notFound, unauthorized } from '../errors.ts';
import { fetchReplies } from '../replies.ts';


function header(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

/**
 * GET /api/commands/{id} (D6): the stored result with the status and body the synchronous answer
 * would have had, or 202 pending. Any gateway instance can answer: both live in PostgreSQL.
 * Accepts the ingest secret, or the cron secret with the command's shop in x-shop.
 */
export function commandRoutes(deps: { pool: Pool; ingestSecrets: string[]; cronSecrets: string[] }): Router {
  const router = Router();
  router.get('/api/commands/:id', async (req, res) => {
    let shopFilter: string | null = null;
    if (secretMatches(header(req.headers['x-ingest-secret']), deps.ingestSecrets)) {
      shopFilter = null;
    } else if (secretMatches(header(req.headers['x-cron-secret']), deps.cronSecrets)) {
      const shop = header(req.headers['x-shop'])?.trim();
      if (!shop) throw badRequest('x-shop header required');
      shopFilter = shop;
    } else if (deps.ingestSecrets.length === 0 && deps.cronSecrets.length === 0) {
      throw notConfigured('INGEST_SECRET');
    } else {
      throw unauthorized();
    }
    const id = String(req.params['id']);
    if (!isUuid(id)) throw notFound('command not found');
    const visible = (shop: string) => shopFilter === null || shopFilter === shop;

    const reply = (await fetchReplies(deps.pool, [id])).get(id);
    if (reply && visible(reply.shop)) {
      res.status(reply.status).json(reply.body);
      return;
    }
    const { rows } = await deps.pool.query<{ shop: string }>('SELECT shop FROM agent_runtime.command_requests WHERE command_id = $1', [id]);
    const pending = rows[0];
    if (!reply && pending && visible(pending.shop)) {
      res.status(202).json({ ok: true, status: 'pending', command_id: id });
      return;
    }
    throw notFound('command not found');
  });
  return router;
}
