// B10's "nothing lost": after the load, every snapshot the gateway accepted (200/202) for a load shop
// is a processed command, exactly once, and its log rows in the rebuilt (swapped-in) tables are
// exactly those the live projector reported writing when it answered (stored results are not
// rebuilt: they are the live pipeline's own record). A count check per shop, as the fault suite does.
import type { Pool } from '@ingest/db';

export interface ShopCheck {
  shop: string;
  /** 200 and 202 answers over the whole bench (setup, capacity probe and phases). */
  accepted: number;
  /** Answers that may or may not have been appended (connection error, 503): not counted as lost. */
  unknown: number;
  processed: number;
  /** Processed commands whose log rows in the rebuilt tables differ from the live reply's logs_written. */
  logs_mismatched: number;
  log_rows: number;
  logs_written_by_replies: number;
  /** Levels at the shop's location: one per line of its bodies. */
  levels: number;
}

export interface NothingLost {
  shops: ShopCheck[];
  lost: number;
  doubled: number;
  ok: boolean;
}

export async function checkNothingLost(
  pool: Pool,
  shops: Array<{ shop: string; accepted: number; unknown: number }>,
  linesPerRequest: number,
): Promise<NothingLost> {
  const out: ShopCheck[] = [];
  for (const s of shops) {
    const { rows } = await pool.query<{ processed: number; mismatched: number; log_rows: number; written: number }>(
      `SELECT count(*)::int AS processed,
              count(*) FILTER (WHERE coalesce(l.n, 0) <> (r.body->>'logs_written')::int)::int AS mismatched,
              coalesce(sum(l.n), 0)::int AS log_rows,
              coalesce(sum((r.body->>'logs_written')::int), 0)::int AS written
         FROM agent_runtime.processed_commands p
         LEFT JOIN agent_runtime.command_results r USING (command_id)
         LEFT JOIN (SELECT command_id, count(*)::int AS n FROM sot.inventory_update_logs WHERE shop = $1 GROUP BY 1) l USING (command_id)
        WHERE p.shop = $1 AND p.kind = 'inventory.snapshot'`,
      [s.shop],
    );
    const levels = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM sot.inventory_levels WHERE shop = $1', [s.shop]);
    const r = rows[0]!;
    out.push({
      ...s,
      processed: r.processed,
      logs_mismatched: r.mismatched,
      log_rows: r.log_rows,
      logs_written_by_replies: r.written,
      levels: levels.rows[0]!.n,
    });
  }
  const lost = out.reduce((a, s) => a + Math.max(0, s.accepted - s.processed) + s.logs_mismatched, 0);
  const doubled = out.reduce((a, s) => a + Math.max(0, s.processed - s.accepted - s.unknown), 0);
  const levelsOk = out.every((s) => s.levels === linesPerRequest);
  return { shops: out, lost, doubled, ok: lost === 0 && doubled === 0 && levelsOk };
}
