import type { Queryable } from '../pool.ts';

/** The advisory lock key of the shop in SQL parameter `param`, in the current schema (lockShop). */
export const shopLockKey = (param: string): string => `hashtextextended(current_schema() || '/' || ${param}, 0)`;

/**
 * Serialises the transactions that write one shop's rows, for the rest of this transaction. The
 * shop's commands share a partition and are claimed in order, so this only matters when they do
 * not (the topic was repartitioned, or a second projector group runs by mistake); one lock instead
 * of FOR UPDATE on every loaded row, which wrote a lock into each of a snapshot's 10,000 tuples.
 * Keyed by the schema as well, so a rebuild in a shadow schema (D26) never waits for live.
 */
export async function lockShop(q: Queryable, shop: string): Promise<void> {
  await q.query(`SELECT pg_advisory_xact_lock(${shopLockKey('$1')})`, [shop]);
}
