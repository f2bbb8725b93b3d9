import type { Queryable } from '../pool.ts';
import { pruneTarget } from './prune.ts';
import type { LedgerTable, ReceivedCommand } from './types.ts';

/**
 * agent_runtime.request_keys: the `Idempotency-Key` header's state (docs/api.md), one row per
 * (credential, shop, key) with the request's fingerprint and the command it started, so every
 * gateway instance sees it. Not idempotencyKeys: that is the delta body key of D19.
 */
export const TABLE: LedgerTable = { schema: 'agent_runtime', name: 'request_keys', key: ['credential', 'shop', 'key'] };

/** Who and where a key belongs to: a key never matches another credential's or another shop's. */
export interface KeyScope {
  credential: string;
  shop: string;
  key: string;
}

/**
 * Records the key with its command id and the command's request row (agent_runtime.command_requests)
 * in one statement, before the append; true when this request owns the key. A row past the TTL
 * that the pruner has not reached yet is taken over as if absent.
 */
export async function claim(
  q: Queryable,
  scope: KeyScope,
  fingerprint: string,
  command: ReceivedCommand,
  leaseMs: number,
  ttlMs: number,
): Promise<boolean> {
  const { rows } = await q.query<{ command_id: string }>(
    `WITH k AS (
       INSERT INTO agent_runtime.request_keys (credential, shop, key, fingerprint, command_id, received_at, lease_until)
       VALUES ($1, $2, $3, $4, $5, $6, now() + $7 * interval '1 millisecond')
       ON CONFLICT (credential, shop, key) DO UPDATE
          SET fingerprint = EXCLUDED.fingerprint, command_id = EXCLUDED.command_id, received_at = EXCLUDED.received_at,
              lease_until = EXCLUDED.lease_until, answered = false, created_at = now()
        WHERE request_keys.created_at < now() - $8 * interval '1 millisecond'
       RETURNING command_id),
     r AS (
       INSERT INTO agent_runtime.command_requests (command_id, shop, kind, received_at)
       SELECT command_id, $2, $9, $6 FROM k ON CONFLICT DO NOTHING)
     SELECT command_id FROM k`,
    [scope.credential, scope.shop, scope.key, fingerprint, command.command_id, command.received_at, leaseMs, ttlMs, command.kind],
  );
  return rows.length === 1;
}

export interface StoredKey {
  fingerprint: string;
  command_id: string;
  received_at: string;
  answered: boolean;
  /** The first request's lease has run out (it crashed, or its gateway is gone). */
  lapsed: boolean;
  /** Seconds until the lease runs out. */
  wait_s: number;
}

/** The key's row within its TTL; null when there is none. */
export async function read(q: Queryable, scope: KeyScope, ttlMs: number): Promise<StoredKey | null> {
  const { rows } = await q.query<Omit<StoredKey, 'received_at'> & { received_ms: number }>(
    `SELECT fingerprint, command_id, (extract(epoch FROM received_at) * 1000)::float8 AS received_ms, answered, lease_until <= now() AS lapsed,
            GREATEST(1, ceil(extract(epoch FROM lease_until - now())))::int AS wait_s
       FROM agent_runtime.request_keys
      WHERE credential = $1 AND shop = $2 AND key = $3 AND created_at >= now() - $4 * interval '1 millisecond'`,
    [scope.credential, scope.shop, scope.key, ttlMs],
  );
  const row = rows[0];
  if (!row) return null;
  const { received_ms, ...rest } = row;
  return { ...rest, received_at: new Date(Math.round(received_ms)).toISOString() };
}

/** After the lease: this request carries the same command on; false when another retry got there first. */
export async function takeOver(q: Queryable, scope: KeyScope, commandId: string, leaseMs: number): Promise<boolean> {
  const r = await q.query(
    `UPDATE agent_runtime.request_keys SET lease_until = now() + $5 * interval '1 millisecond'
      WHERE credential = $1 AND shop = $2 AND key = $3 AND command_id = $4 AND NOT answered AND lease_until <= now()`,
    [scope.credential, scope.shop, scope.key, commandId, leaseMs],
  );
  return r.rowCount === 1;
}

/** A 202 was given: a retry answers it again (or the result, once known) instead of 409. */
export async function markAnswered(q: Queryable, scope: KeyScope, commandId: string): Promise<void> {
  await q.query(
    'UPDATE agent_runtime.request_keys SET answered = true WHERE credential = $1 AND shop = $2 AND key = $3 AND command_id = $4',
    [scope.credential, scope.shop, scope.key, commandId],
  );
}

/** The command was certainly not appended (or its result says send it again): the key is free again. */
export async function release(q: Queryable, scope: KeyScope, commandId: string): Promise<void> {
  await q.query('DELETE FROM agent_runtime.request_keys WHERE credential = $1 AND shop = $2 AND key = $3 AND command_id = $4', [
    scope.credential,
    scope.shop,
    scope.key,
    commandId,
  ]);
}

/** Keys older than IDEMPOTENCY_KEY_TTL. */
export const prune = pruneTarget(TABLE, "created_at < now() - $1 * interval '1 millisecond'");
