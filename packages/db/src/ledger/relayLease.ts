import type { Queryable } from '../pool.ts';
import type { LedgerTable } from './types.ts';

/**
 * agent_runtime.relay_lease: one publisher (docs/operations.md "Faults and outages"). The relay that
 * holds the advisory lock renews this lease on its locked session before each batch; one that takes
 * the lock over waits until the previous holder's last renewal is older than the fence.
 */
export const TABLE: LedgerTable = { schema: 'agent_runtime', name: 'relay_lease', key: ['id'] };

/** The last holder and how long (ms) until its last renewal is older than `fenceMs`; null when no relay ever led. */
export async function fence(q: Queryable, fenceMs: number): Promise<{ holder: string; wait_ms: number } | null> {
  const prev = await q.query<{ holder: string; wait_ms: number }>(
    `SELECT holder, CASE WHEN renewed_at + $1 * interval '1 millisecond' > now()
                          THEN ceil(EXTRACT(EPOCH FROM (renewed_at + $1 * interval '1 millisecond' - now())) * 1000)::int ELSE 0 END AS wait_ms
         FROM agent_runtime.relay_lease WHERE id = 1`,
    [fenceMs],
  );
  return prev.rows[0] ?? null;
}

/** Renewed on the locked session itself: if this succeeds the session, and so the lock, is the holder's. */
export async function renew(q: Queryable, holder: string): Promise<void> {
  await q.query(
    `INSERT INTO agent_runtime.relay_lease (id, holder, renewed_at) VALUES (1, $1, now())
       ON CONFLICT (id) DO UPDATE SET holder = EXCLUDED.holder, renewed_at = EXCLUDED.renewed_at`,
    [holder],
  );
}

/** A graceful stop hands over at once: no batch of the holder's is in flight, so no fence to wait out. */
export async function handOver(q: Queryable, holder: string): Promise<void> {
  await q.query(`UPDATE agent_runtime.relay_lease SET renewed_at = 'epoch' WHERE id = 1 AND holder = $1`, [holder]);
}
