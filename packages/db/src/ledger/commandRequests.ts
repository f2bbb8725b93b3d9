import type { Queryable } from '../pool.ts';
import { pruneTarget } from './prune.ts';
import { PAGE_TIME, type LedgerTable, type ReceivedCommand, type TimePageKey } from './types.ts';

/**
 * agent_runtime.command_requests: a command the gateway accepted, recorded before it is appended,
 * so that any gateway instance answers `pending` for it (D6) and never 404 after a 200 or 202.
 * A keyed request's row is written by requestKeys.claim, in the key's statement.
 */
export const TABLE: LedgerTable = { schema: 'agent_runtime', name: 'command_requests', key: ['command_id'] };

export async function record(q: Queryable, c: ReceivedCommand): Promise<void> {
  await q.query(
    'INSERT INTO agent_runtime.command_requests (command_id, shop, kind, received_at) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING',
    [c.command_id, c.shop, c.kind, c.received_at],
  );
}

/** The command was not appended and its id never given out: no row may say it is pending. */
export async function forget(q: Queryable, commandId: string): Promise<void> {
  await q.query('DELETE FROM agent_runtime.command_requests WHERE command_id = $1', [commandId]);
}

/** The accepted command's shop and receive time; null when it was never accepted (or was pruned). */
export async function find(q: Queryable, commandId: string): Promise<{ shop: string; received_at: Date } | null> {
  const { rows } = await q.query<{ shop: string; received_at: Date }>(
    'SELECT shop, received_at FROM agent_runtime.command_requests WHERE command_id = $1',
    [commandId],
  );
  return rows[0] ?? null;
}

export interface PendingRow {
  command_id: string;
  shop: string;
  kind: string;
  /** received_at (TimePageKey text). */
  at: string;
}

/**
 * One page of accepted commands with no stored answer that are not parked either (GET
 * /api/commands/{id} would answer `pending`), newest first, after `after`: keyset on the
 * received_at index, never OFFSET.
 */
export async function pendingPage(
  q: Queryable,
  opts: { shop: string | null; after: TimePageKey | null; limit: number },
): Promise<PendingRow[]> {
  const params: unknown[] = [opts.limit];
  const where = [
    'NOT EXISTS (SELECT 1 FROM agent_runtime.command_results r WHERE r.command_id = q.command_id)',
    'NOT EXISTS (SELECT 1 FROM agent_runtime.parked_commands p WHERE p.command_id = q.command_id AND p.resolved_at IS NULL)',
  ];
  if (opts.shop !== null) where.push(`q.shop = $${params.push(opts.shop)}`);
  if (opts.after) {
    const [at, id] = [params.push(opts.after.at), params.push(opts.after.command_id)];
    where.push(`(q.received_at, q.command_id) < ($${at}::timestamptz, $${id}::uuid)`);
  }
  const { rows } = await q.query<PendingRow>(
    `SELECT q.command_id, q.shop, q.kind, ${PAGE_TIME('q.received_at')} AS at
       FROM agent_runtime.command_requests q WHERE ${where.join(' AND ')}
      ORDER BY q.received_at DESC, q.command_id DESC LIMIT $1`,
    params,
  );
  return rows;
}

/**
 * A request without a result is kept past the result window by this much: its command may still wait
 * in the log (a projector down, a lag longer than the window), and until it is applied its poll must
 * answer `pending`, not 410 `expired`. A request whose command never reached the log (its gateway
 * killed between the record and the append) has no result ever and goes after this.
 */
export const UNRESOLVED_KEPT_DAYS = 30;

/**
 * Requests older than the result window whose command has its result (the poll answers from the
 * result then), and unresolved ones UNRESOLVED_KEPT_DAYS later; their command times widen the pruned
 * span (410 `expired`).
 */
export const prune = pruneTarget(
  TABLE,
  `received_at < now() - $1 * interval '1 millisecond'
     AND (EXISTS (SELECT 1 FROM agent_runtime.command_results r WHERE r.command_id = command_requests.command_id)
          OR received_at < now() - $1 * interval '1 millisecond' - interval '${UNRESOLVED_KEPT_DAYS} days')`,
  'received_at',
);
