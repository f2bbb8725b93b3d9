import type { Queryable } from '../pool.ts';
import type { LedgerTable } from './types.ts';

/**
 * agent_runtime.pruned_span: the span of command times whose results or requests were pruned
 * (docs/operations.md#retention). An id from that span with nothing stored answers 410 `expired`
 * (GET /api/commands/{id}); an id from outside it, 404.
 */
export const TABLE: LedgerTable = { schema: 'agent_runtime', name: 'pruned_span', key: ['what'] };

/**
 * A batch delete (`del`, whose rows have the time column `column`) that widens the span by the
 * rows it deleted, in the same statement; it returns `n`, the rows deleted.
 */
export const deleteWidening = (del: string, column: string): string =>
  `WITH d AS (${del} RETURNING ${column} AS at)
                   INSERT INTO agent_runtime.pruned_span (what, oldest, newest)
                   SELECT 'commands', min(at), max(at) FROM d HAVING count(*) > 0
                   ON CONFLICT (what) DO UPDATE SET oldest = LEAST(pruned_span.oldest, EXCLUDED.oldest), newest = GREATEST(pruned_span.newest, EXCLUDED.newest)
                   RETURNING (SELECT count(*)::int FROM d) AS n`;

/** True when the creation time (ms, a UUIDv7's) lies in the span of pruned commands. */
export async function covers(q: Queryable, createdMs: number): Promise<boolean> {
  const { rows } = await q.query<{ hit: boolean }>(
    `SELECT to_timestamp($1::double precision / 1000) BETWEEN oldest - interval '1 minute' AND newest AS hit FROM agent_runtime.pruned_span WHERE what = 'commands'`,
    [createdMs],
  );
  return rows[0]?.hit === true;
}
