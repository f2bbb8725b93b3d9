import type { Queryable } from '../pool.ts';
import type { LedgerTable } from './types.ts';

/**
 * agent_runtime.daily_snapshot_runs: the (shop, date) daily copies done (D16), so each is done
 * once. Projection state: the projection's statement names it without a schema (search path, D26).
 */
export const TABLE: LedgerTable = { schema: 'agent_runtime', name: 'daily_snapshot_runs', key: ['shop', 'snapshot_date'] };

/** Records the (shop, date) run; false when it was done already. */
export async function record(q: Queryable, shop: string, date: string, commandId: string, at: string): Promise<boolean> {
  const run = await q.query(
    `INSERT INTO daily_snapshot_runs (shop, snapshot_date, command_id, created_at)
     VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`,
    [shop, date, commandId, at],
  );
  return run.rowCount !== 0;
}

/** The shops with inventory levels whose run for `date` is not done yet (the daily scheduler's due commands). */
export async function shopsWithoutRun(q: Queryable, date: string): Promise<string[]> {
  const { rows } = await q.query<{ shop: string }>(
    `SELECT DISTINCT l.shop FROM sot.inventory_levels l
        WHERE NOT EXISTS (SELECT 1 FROM agent_runtime.daily_snapshot_runs r WHERE r.shop = l.shop AND r.snapshot_date = $1)`,
    [date],
  );
  return rows.map((r) => r.shop);
}
