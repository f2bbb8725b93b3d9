import type { Queryable } from '../pool.ts';
import type { LedgerTable } from './types.ts';

/**
 * agent_runtime.idempotency_keys: the delta body keys already applied (D19, kept indefinitely).
 * Projection state: a rebuild (D26) replays it and `verify` compares it, so its statements name the
 * table without a schema and resolve through the search path (the shadow schema during a rebuild).
 */
export const TABLE: LedgerTable = { schema: 'agent_runtime', name: 'idempotency_keys', key: ['shop', 'idempotency_key'] };

/** The payload hash the key was first applied with; null when the key is new. */
export async function find(q: Queryable, shop: string, key: string): Promise<{ payload_hash: string } | null> {
  const { rows } = await q.query<{ payload_hash: string }>(
    'SELECT payload_hash FROM idempotency_keys WHERE shop = $1 AND idempotency_key = $2',
    [shop, key],
  );
  return rows[0] ?? null;
}

export async function record(
  q: Queryable,
  shop: string,
  key: { idempotency_key: string; payload_hash: string },
  commandId: string,
  at: string,
): Promise<void> {
  await q.query(
    `INSERT INTO idempotency_keys (shop, idempotency_key, command_id, payload_hash, created_at)
     VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`,
    [shop, key.idempotency_key, commandId, key.payload_hash, at],
  );
}
