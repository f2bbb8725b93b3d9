import type { Queryable } from '../pool.ts';
import { pruneTarget } from './prune.ts';
import type { CommandPosition, LedgerTable } from './types.ts';

/**
 * agent_runtime.parked_commands (docs/operations.md#parked-commands): a command that failed for a
 * reason retrying will not fix, and the later commands of its shop parked behind it (D2), until an
 * operator retries or skips them.
 */
export const TABLE: LedgerTable = { schema: 'agent_runtime', name: 'parked_commands', key: ['command_id'] };

/** The shop's first open parked command, if any: its later commands wait behind it (D2). */
export async function firstOpen(q: Queryable, shop: string): Promise<string | null> {
  const { rows } = await q.query<{ command_id: string }>(
    `SELECT command_id FROM agent_runtime.parked_commands WHERE shop = $1 AND resolved_at IS NULL
      ORDER BY kafka_topic, kafka_partition, kafka_offset LIMIT 1`,
    [shop],
  );
  return rows[0]?.command_id ?? null;
}

/** firstOpen of several shops in one statement: each shop that has an open parked command, and its first. */
export async function firstOpenOf(q: Queryable, shops: readonly string[]): Promise<Map<string, string>> {
  if (shops.length === 0) return new Map();
  const { rows } = await q.query<{ shop: string; command_id: string }>(
    `SELECT DISTINCT ON (shop) shop, command_id FROM agent_runtime.parked_commands
      WHERE shop = ANY($1::text[]) AND resolved_at IS NULL
      ORDER BY shop, kafka_topic, kafka_partition, kafka_offset`,
    [shops],
  );
  return new Map(rows.map((r) => [r.shop, r.command_id]));
}

export interface ParkedCommand {
  command_id: string;
  shop: string;
  kind: string;
  at: CommandPosition;
  message: Buffer;
  error: string;
  attempts: number;
  behind: string | null;
}

/** Parks a command and wakes its waiting caller (NOTIFY command_results), who is told it is parked. */
export async function park(q: Queryable, p: ParkedCommand): Promise<void> {
  await q.query(
    `WITH ins AS (
       INSERT INTO agent_runtime.parked_commands
         (command_id, shop, kind, kafka_topic, kafka_partition, kafka_offset, message, error, attempts, behind)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
       ON CONFLICT (command_id) DO NOTHING RETURNING command_id)
     SELECT pg_notify('command_results', command_id::text) FROM ins`,
    [p.command_id, p.shop, p.kind, p.at.topic, p.at.partition, p.at.offset, p.message, p.error, p.attempts, p.behind],
  );
}

export interface ParkedRow {
  command_id: string;
  shop: string;
  kind: string;
  kafka_partition: number;
  kafka_offset: number;
  error: string;
  attempts: number;
  behind: string | null;
  parked_at: Date;
}

/** Open parked commands, by shop and in log order (the order they will be applied in). */
export async function listOpen(q: Queryable): Promise<ParkedRow[]> {
  const { rows } = await q.query<ParkedRow>(
    `SELECT command_id, shop, kind, kafka_partition, kafka_offset, error, attempts, behind, parked_at
       FROM agent_runtime.parked_commands WHERE resolved_at IS NULL
      ORDER BY shop, kafka_topic, kafka_partition, kafka_offset`,
  );
  return rows;
}

/** Where a keyset page of open parked commands resumes: the last row's shop and log position. */
export interface ParkedPageKey {
  shop: string;
  kafka_topic: string;
  kafka_partition: number;
  kafka_offset: number;
}

export interface ParkedPageRow extends ParkedRow, ParkedPageKey {}

/**
 * One page of open parked commands in listOpen's order (by shop, then log position: the order
 * they will be applied in), after `after`; keyset on the open index, never OFFSET.
 */
export async function openPage(
  q: Queryable,
  opts: { shop: string | null; after: ParkedPageKey | null; limit: number },
): Promise<ParkedPageRow[]> {
  const params: unknown[] = [opts.limit];
  const where = ['resolved_at IS NULL'];
  if (opts.shop !== null) where.push(`shop = $${params.push(opts.shop)}`);
  if (opts.after) {
    const a = opts.after;
    const [s, t, p, o] = [params.push(a.shop), params.push(a.kafka_topic), params.push(a.kafka_partition), params.push(a.kafka_offset)];
    where.push(`(shop, kafka_topic, kafka_partition, kafka_offset) > ($${s}::text, $${t}::text, $${p}::int, $${o}::bigint)`);
  }
  const { rows } = await q.query<ParkedPageRow>(
    `SELECT command_id, shop, kind, kafka_topic, kafka_partition, kafka_offset, error, attempts, behind, parked_at
       FROM agent_runtime.parked_commands WHERE ${where.join(' AND ')}
      ORDER BY shop, kafka_topic, kafka_partition, kafka_offset LIMIT $1`,
    params,
  );
  return rows;
}

/** The shop of an open parked command; null when there is no such open command. */
export async function shopOfOpen(q: Queryable, commandId: string): Promise<string | null> {
  const { rows } = await q.query<{ shop: string }>(
    'SELECT shop FROM agent_runtime.parked_commands WHERE command_id = $1 AND resolved_at IS NULL',
    [commandId],
  );
  return rows[0]?.shop ?? null;
}

/**
 * The shop's first open parked command with its message, locked for this transaction (the
 * operator's retry, D2). The ORDER BY names the table's columns: a bare `kafka_offset` would be the
 * output column `kafka_offset::text`, and offsets would sort as text ('10' before '9').
 */
export async function takeFirstOpen(
  q: Queryable,
  shop: string,
): Promise<{ command_id: string; kafka_topic: string; kafka_partition: number; kafka_offset: string; message: Buffer } | null> {
  const { rows } = await q.query<{
    command_id: string;
    kafka_topic: string;
    kafka_partition: number;
    kafka_offset: string;
    message: Buffer;
  }>(
    `SELECT p.command_id, p.kafka_topic, p.kafka_partition, p.kafka_offset::text AS kafka_offset, p.message
       FROM agent_runtime.parked_commands p
      WHERE p.shop = $1 AND p.resolved_at IS NULL ORDER BY p.kafka_topic, p.kafka_partition, p.kafka_offset LIMIT 1 FOR UPDATE`,
    [shop],
  );
  return rows[0] ?? null;
}

/** Resolved: applied by an operator's retry. */
export async function markRetried(q: Queryable, commandId: string): Promise<void> {
  await q.query(`UPDATE agent_runtime.parked_commands SET resolved_at = now(), resolution = 'retried' WHERE command_id = $1`, [commandId]);
}

/** An operator's retry failed again: the command stays parked with its new error, no longer behind another. */
export async function recordFailedRetry(q: Queryable, commandId: string, error: string): Promise<void> {
  await q.query('UPDATE agent_runtime.parked_commands SET error = $2, attempts = attempts + 1, behind = NULL WHERE command_id = $1', [
    commandId,
    error,
  ]);
}

/** Resolved as skipped by an operator: never applied. Null when it is not an open parked command. */
export async function markSkipped(
  q: Queryable,
  commandId: string,
): Promise<{ kind: string; error: string; kafka_topic: string; kafka_partition: number; kafka_offset: string; parked_at: Date } | null> {
  const { rows } = await q.query<{
    kind: string;
    error: string;
    kafka_topic: string;
    kafka_partition: number;
    kafka_offset: string;
    parked_at: Date;
  }>(
    `UPDATE agent_runtime.parked_commands SET resolved_at = now(), resolution = 'skipped'
        WHERE command_id = $1 AND resolved_at IS NULL RETURNING kind, error, kafka_topic, kafka_partition, kafka_offset::text, parked_at`,
    [commandId],
  );
  return rows[0] ?? null;
}

/** Open parked commands of the shop. */
export async function countOpenOfShop(q: Queryable, shop: string): Promise<number> {
  const left = await q.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM agent_runtime.parked_commands WHERE shop = $1 AND resolved_at IS NULL',
    [shop],
  );
  return left.rows[0]?.n ?? 0;
}

/** Open parked commands of every shop (a gauge). */
export async function countOpen(q: Queryable): Promise<number> {
  const open = await q.query<{ n: number }>('SELECT count(*)::int AS n FROM agent_runtime.parked_commands WHERE resolved_at IS NULL');
  return open.rows[0]?.n ?? 0;
}

/**
 * What the live projector did not apply, of these commands: those still parked (`open`: an operator
 * may yet retry them) and those an operator skipped (`skipped`). A replay passes over both (D26).
 */
export async function notAppliedLive(q: Queryable, commandIds: string[]): Promise<Map<string, 'open' | 'skipped'>> {
  if (commandIds.length === 0) return new Map();
  const { rows } = await q.query<{ command_id: string; resolution: string | null }>(
    `SELECT command_id::text, resolution FROM agent_runtime.parked_commands
      WHERE command_id = ANY($1::uuid[]) AND (resolution IS NULL OR resolution = 'skipped')`,
    [commandIds],
  );
  return new Map(rows.map((r) => [r.command_id, r.resolution === null ? 'open' : 'skipped']));
}

/** Resolved parked commands older than the result window. */
export const prune = pruneTarget(TABLE, "resolved_at IS NOT NULL AND resolved_at < now() - $1 * interval '1 millisecond'");
