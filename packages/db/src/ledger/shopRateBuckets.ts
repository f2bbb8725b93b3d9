import type { Queryable } from '../pool.ts';
import type { LedgerTable } from './types.ts';

/**
 * agent_runtime.shop_rate_buckets (docs/api.md#fair-admission-per-shop): each shop's lines/s token
 * bucket, shared by every gateway, which lease tokens from it in chunks. One small row per shop that
 * ever had a lines/s budget: not pruned (a shop's row is reused for as long as it sends).
 */
export const TABLE: LedgerTable = { schema: 'agent_runtime', name: 'shop_rate_buckets', key: ['shop'] };

/**
 * Takes up to `want` tokens from the shop's bucket, refilled first at `rate` per second up to
 * `burst` (a shop seen for the first time starts full), in one statement: concurrent leases of the
 * same shop queue on its row and each sees what the one before left. Answers what was granted (0
 * when the bucket is empty) and what is left.
 */
export async function lease(
  q: Queryable,
  shop: string,
  want: number,
  budget: { ratePerS: number; burst: number },
): Promise<{ granted: number; left: number }> {
  // One time for the whole statement (now(): its start). A lease that waited for the row behind a
  // later one sees no negative refill and does not move the refill time back.
  const refilled = `LEAST($4::float8, b.tokens + GREATEST(0, EXTRACT(EPOCH FROM now() - b.refilled_at)) * $3::float8)`;
  const { rows } = await q.query<{ granted: number; left: number }>(
    `INSERT INTO agent_runtime.shop_rate_buckets AS b (shop, tokens, refilled_at, granted)
     VALUES ($1, $4::float8 - LEAST($2::float8, $4::float8), now(), LEAST($2::float8, $4::float8))
     ON CONFLICT (shop) DO UPDATE SET
       granted = GREATEST(0, LEAST($2::float8, ${refilled})),
       tokens = ${refilled} - GREATEST(0, LEAST($2::float8, ${refilled})),
       refilled_at = GREATEST(b.refilled_at, now())
     RETURNING granted, tokens AS left`,
    [shop, want, budget.ratePerS, budget.burst],
  );
  return { granted: Number(rows[0]!.granted), left: Number(rows[0]!.left) };
}
