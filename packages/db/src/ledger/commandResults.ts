import type { Queryable } from '../pool.ts';
import { pruneTarget } from './prune.ts';
import { PAGE_TIME, type CommandRef, type LedgerTable, type StoredAnswer, type TimePageKey } from './types.ts';

/** agent_runtime.command_results: each command's stored answer (D6), kept for the result window. */
export const TABLE: LedgerTable = { schema: 'agent_runtime', name: 'command_results', key: ['command_id'] };

/** Announces a stored answer (its command id) on commit: every gateway LISTENs here and wakes its own waiters. */
export const CHANNEL = 'command_results';

/** The stored reply (D6): parameters $1..$5 as resultParams gives them; returns its command id when new. */
export const RESULT_SQL = `INSERT INTO agent_runtime.command_results (command_id, shop, kind, status_code, body)
  VALUES ($1, $2, $3, $4, $5) ON CONFLICT (command_id) DO NOTHING RETURNING command_id`;

export const resultParams = (c: CommandRef, reply: StoredAnswer): unknown[] => [
  c.command_id,
  c.shop,
  c.kind,
  reply.status,
  JSON.stringify(reply.body),
];

/** Stores the reply and wakes the waiting gateways (NOTIFY is delivered on commit). */
export async function store(q: Queryable, c: CommandRef, reply: StoredAnswer): Promise<void> {
  await q.query(`WITH r AS (${RESULT_SQL}) SELECT pg_notify('command_results', $1::text) FROM r`, resultParams(c, reply));
}

/**
 * The gateway gave up appending a command whose 202 was already given: its result (503 with
 * `body`) tells the client to send it again; a result already there is kept.
 */
export async function storeNotAppended(q: Queryable, c: CommandRef, body: Record<string, unknown>): Promise<void> {
  await q.query(
    `WITH r AS (
       INSERT INTO agent_runtime.command_results (command_id, shop, kind, status_code, body)
       VALUES ($1, $2, $3, 503, $4) ON CONFLICT (command_id) DO NOTHING RETURNING command_id)
     SELECT pg_notify('command_results', $1::text) FROM r`,
    [c.command_id, c.shop, c.kind, JSON.stringify(body)],
  );
}

export interface AnswerRow {
  command_id: string;
  status_code: number;
  body: Record<string, unknown>;
  shop: string;
  /** A parked command's answer (202 `parked`): it has no result yet (docs/operations.md#parked-commands). */
  parked: boolean;
}

/**
 * The stored answers of these commands: the projector's result, or for a parked command without
 * one its parked state (agent_runtime.parked_commands), as the 202 its caller is given.
 */
export async function answers(q: Queryable, ids: string[]): Promise<AnswerRow[]> {
  if (ids.length === 0) return [];
  const { rows } = await q.query<AnswerRow>(
    `SELECT command_id, status_code, body, shop, false AS parked
       FROM agent_runtime.command_results WHERE command_id = ANY($1::uuid[])
     UNION ALL
     SELECT p.command_id, 202,
            json_build_object('ok', true, 'status', 'parked', 'command_id', p.command_id, 'error', p.error,
                              'parked_at', p.parked_at, 'waiting_behind', p.behind),
            p.shop, true
       FROM agent_runtime.parked_commands p
      WHERE p.command_id = ANY($1::uuid[]) AND p.resolved_at IS NULL
        AND NOT EXISTS (SELECT 1 FROM agent_runtime.command_results r WHERE r.command_id = p.command_id)`,
    [ids],
  );
  return rows;
}

/** A stored answer with an error status, and where its command was read from the log when that is still known. */
export interface FailedRow {
  command_id: string;
  shop: string;
  kind: string;
  status_code: number;
  error: string | null;
  error_kind: string | null;
  /** The result's time (TimePageKey text). */
  at: string;
  kafka_topic: string | null;
  kafka_partition: number | null;
  kafka_offset: number | null;
}

/**
 * One page of stored answers with status >= 400, newest first, after `after` (keyset on the
 * partial index command_results_failed_idx, never OFFSET). The position comes from the claim
 * (kept for MARKER_RETENTION) or the parked row of a skipped command; a command never appended
 * (503) has none.
 */
export async function failedPage(
  q: Queryable,
  opts: { shop: string | null; after: TimePageKey | null; limit: number },
): Promise<FailedRow[]> {
  const params: unknown[] = [opts.limit];
  const where = ['r.status_code >= 400'];
  if (opts.shop !== null) where.push(`r.shop = $${params.push(opts.shop)}`);
  if (opts.after) {
    const [at, id] = [params.push(opts.after.at), params.push(opts.after.command_id)];
    where.push(`(r.created_at, r.command_id) < ($${at}::timestamptz, $${id}::uuid)`);
  }
  const { rows } = await q.query<FailedRow>(
    `SELECT r.command_id, r.shop, r.kind, r.status_code, r.body->>'error' AS error, r.body->>'error_kind' AS error_kind,
            ${PAGE_TIME('r.created_at')} AS at,
            COALESCE(c.kafka_topic, p.kafka_topic) AS kafka_topic,
            COALESCE(c.kafka_partition, p.kafka_partition) AS kafka_partition,
            COALESCE(c.kafka_offset, p.kafka_offset) AS kafka_offset
       FROM agent_runtime.command_results r
       LEFT JOIN agent_runtime.processed_commands c ON c.command_id = r.command_id
       LEFT JOIN agent_runtime.parked_commands p ON p.command_id = r.command_id
      WHERE ${where.join(' AND ')}
      ORDER BY r.created_at DESC, r.command_id DESC LIMIT $1`,
    params,
  );
  return rows;
}

/** Results older than the result window; their command times widen the pruned span (410 `expired`). */
export const prune = pruneTarget(TABLE, "created_at < now() - $1 * interval '1 millisecond'", 'created_at');
