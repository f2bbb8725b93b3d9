import { Router } from 'express';
import type { Pool } from '@ingest/db';
import { isUuid } from '@ingest/domain';
import { secretMatches } from '../auth.ts';
import { ApiError, badRequest, notConfigured, notFound, unauthorized } from '../errors.ts';
import { fetchReplies } from '../replies.ts';

function header(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

/** The creation time a UUIDv7 carries (its first 48 bits, in ms), or null for another version. */
export function uuidv7Time(id: string): number | null {
  if (id[14] !== '7') return null;
  return parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
}

/** True when the id is a UUIDv7 from the span of command times whose records were pruned. */
async function wasPruned(pool: Pool, id: string): Promise<boolean> {
  const created = uuidv7Time(id);
  if (created === null) return false;
  const { rows } = await pool.query<{ hit: boolean }>(
    `SELECT to_timestamp($1::double precision / 1000) BETWEEN oldest - interval '1 minute' AND newest AS hit FROM agent_runtime.pruned_span WHERE what = 'commands'`,
    [created],
  );
  return rows[0]?.hit === true;
}

const formatWindow = (ms: number): string =>
  ms % 86_400_000 === 0 ? `${ms / 86_400_000}d` : ms % 3_600_000 === 0 ? `${ms / 3_600_000}h` : `${Math.round(ms / 1000)}s`;

/**
 * GET /api/commands/{id} (D6): the stored result with the status and body the synchronous answer
 * would have had, 202 pending, or 202 parked (issue 11). Any gateway instance can answer: all live
 * in PostgreSQL, and a command is recorded there before its 202 is given. Results are kept for
 * `resultRetentionMs`; an id from the span of pruned commands answers 410 `expired`, not 404.
 * Accepts the ingest secret, or the cron secret with the command's shop in x-shop.
 */
export function commandRoutes(deps: { pool: Pool; ingestSecrets: string[]; cronSecrets: string[]; resultRetentionMs: number }): Router {
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
    // A uuid is case-insensitive (RFC 9562); stored ids are lower case.
    const id = String(req.params['id']).toLowerCase();
    if (!isUuid(id)) throw notFound('command not found');
    const visible = (shop: string) => shopFilter === null || shopFilter === shop;

    const reply = (await fetchReplies(deps.pool, [id])).get(id);
    if (reply && visible(reply.shop)) {
      // A command the producer gave up on after its 202 (submit.ts): send it again, after a pause.
      if (reply.status === 503) res.set('Retry-After', '5');
      res.status(reply.status).json(reply.body);
      return;
    }
    if (!reply) {
      const { rows } = await deps.pool.query<{ shop: string }>('SELECT shop FROM agent_runtime.command_requests WHERE command_id = $1', [id]);
      const pending = rows[0];
      if (pending && visible(pending.shop)) {
        res.status(202).json({ ok: true, status: 'pending', command_id: id });
        return;
      }
      if (!pending && (await wasPruned(deps.pool, id))) {
        throw new ApiError(410, {
          ok: false,
          status: 'expired',
          command_id: id,
          error: `command result expired: results are kept for ${formatWindow(deps.resultRetentionMs)}`,
        });
      }
    }
    throw notFound('command not found');
  });
  return router;
}
