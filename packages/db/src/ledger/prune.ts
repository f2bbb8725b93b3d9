import type { Queryable } from '../pool.ts';
import { deleteWidening } from './prunedSpan.ts';
import { qualified, type LedgerTable } from './types.ts';

/** One table's retention (docs/operations.md#retention): what the pruner deletes, a batch at a time. */
export interface PruneTarget {
  /** The table, schema-qualified: the pruner's counts and metric labels name it so. */
  readonly table: string;
  /**
   * Deletes at most `limit` rows past `windowMs` (null for a table whose rows have no window) in
   * one short statement, found through an index (migrations/1763900000000_fault-tolerance.sql);
   * returns how many went.
   */
  deleteBatch(q: Queryable, windowMs: number | null, limit: number): Promise<number>;
}

/**
 * The prune target of `t`: rows matching `where` (`$1` the window in ms, when it has one). With
 * `span`, the deleted rows' times in that column widen agent_runtime.pruned_span in the same statement.
 */
export function pruneTarget(t: LedgerTable, where: string, span?: string): PruneTarget {
  const table = qualified(t);
  return {
    table,
    deleteBatch: async (q, windowMs, limit) => {
      const params = windowMs === null ? [limit] : [windowMs, limit];
      const last = windowMs === null ? '$1' : '$2';
      const del = `DELETE FROM ${table} WHERE ctid = ANY(ARRAY(SELECT ctid FROM ${table} WHERE ${where} LIMIT ${last}))`;
      if (!span) return (await q.query(del, params)).rowCount ?? 0;
      const r = await q.query<{ n?: number }>(deleteWidening(del, span), params);
      return Number(r.rows[0]?.n ?? 0);
    },
  };
}
