import type { Queryable } from '../pool.ts';
import { RESULT_SQL, resultParams } from './commandResults.ts';
import { pruneTarget } from './prune.ts';
import type { CommandRef, LedgerTable, StoredAnswer } from './types.ts';

/** agent_runtime.outbox (D5): events written with their command, published in id order by the relay. */
export const TABLE: LedgerTable = { schema: 'agent_runtime', name: 'outbox', key: ['id'] };

/** Announced on commit when a command wrote outbox rows: the relay LISTENs here. */
export const CHANNEL = 'outbox';

/** An outbox row as the projection writes it (D3: every field derived from the command). */
export interface OutboxInsert {
  event_id: string;
  topic: string;
  message_key: string;
  headers: Record<string, string>;
  payload: unknown;
  command_id: string;
  /** An audit batch: the relay expands it into one event per record of this log table. */
  log_table: string | null;
}

/** Inserts the rows given as a JSON array in parameter `param`; an event already there is kept. */
const insertRows = (param: string): string =>
  `INSERT INTO agent_runtime.outbox (event_id, topic, message_key, headers, payload, command_id, log_table)
   SELECT event_id, topic, message_key, headers, payload, command_id, log_table
     FROM jsonb_to_recordset(${param}::jsonb) AS x(event_id uuid, topic text, message_key text, headers jsonb,
          payload jsonb, command_id uuid, log_table text)
   ON CONFLICT (event_id) DO NOTHING RETURNING 1`;

/**
 * A projected command's side effects in one statement (two round trips before): its outbox rows (D5;
 * an event already there is kept) and its stored reply (D6, as commandResults.store), each with its
 * NOTIFY on commit (`outbox` only when a row was written).
 */
export async function storeOutcome(q: Queryable, c: CommandRef, reply: StoredAnswer, rows: OutboxInsert[]): Promise<void> {
  await q.query(
    `WITH ins AS (${insertRows('$6')}), r AS (${RESULT_SQL})
     SELECT (SELECT pg_notify('outbox', '') WHERE EXISTS (SELECT 1 FROM ins)),
            (SELECT pg_notify('command_results', $1::text) FROM r)`,
    [...resultParams(c, reply), JSON.stringify(rows)],
  );
}

/** One projected command's outcome, as storeOutcomes takes it. */
export interface Outcome {
  c: CommandRef;
  reply: StoredAnswer;
  rows: OutboxInsert[];
}

/**
 * storeOutcome for the commands of a group transaction in one statement: their outbox rows in the
 * order given (the relay publishes by id, so events keep the commands' order) and their stored
 * replies, each reply with its NOTIFY. The replies go through \`json\`, not \`jsonb\`, which would
 * reorder their keys (command_results.body keeps the key order, D6).
 */
export async function storeOutcomes(q: Queryable, outcomes: readonly Outcome[]): Promise<void> {
  if (outcomes.length === 0) return;
  await q.query(
    `WITH ins AS (${insertRows('$1')}),
     r AS (
       INSERT INTO agent_runtime.command_results (command_id, shop, kind, status_code, body)
       SELECT command_id, shop, kind, status_code, body
         FROM json_to_recordset($2::json) AS x(command_id uuid, shop text, kind text, status_code int, body json)
       ON CONFLICT (command_id) DO NOTHING RETURNING command_id)
     SELECT (SELECT pg_notify('outbox', '') WHERE EXISTS (SELECT 1 FROM ins)),
            (SELECT count(pg_notify('command_results', command_id::text)) FROM r)`,
    [
      JSON.stringify(outcomes.flatMap((o) => o.rows)),
      JSON.stringify(
        outcomes.map(({ c, reply }) => ({
          command_id: c.command_id,
          shop: c.shop,
          kind: c.kind,
          status_code: reply.status,
          body: reply.body,
        })),
      ),
    ],
  );
}

/**
 * Outbox rows that go with no stored reply (an operator's action, docs/operations.md#parked-commands):
 * written in the transaction of what they announce; an event already there is kept.
 */
export async function storeEvents(q: Queryable, rows: OutboxInsert[]): Promise<void> {
  if (rows.length === 0) return;
  await q.query(
    `WITH ins AS (${insertRows('$1')})
     SELECT pg_notify('outbox', '') WHERE EXISTS (SELECT 1 FROM ins)`,
    [JSON.stringify(rows)],
  );
}

/** A row waiting to be published. */
export interface PendingRow {
  id: number;
  topic: string;
  message_key: string;
  headers: Record<string, string>;
  payload: unknown;
  command_id: string;
  log_table: string | null;
}

/** The oldest `limit` unpublished rows, in publish (id) order. */
export async function readPending<R extends PendingRow = PendingRow>(q: Queryable, limit: number): Promise<R[]> {
  const { rows } = await q.query<R>(
    `SELECT id, topic, message_key, headers, payload, command_id, log_table FROM agent_runtime.outbox
        WHERE published_at IS NULL ORDER BY id LIMIT $1`,
    [limit],
  );
  return rows;
}

export async function markPublished(q: Queryable, ids: number[]): Promise<void> {
  await q.query('UPDATE agent_runtime.outbox SET published_at = now() WHERE id = ANY($1::bigint[])', [ids]);
}

/** Unpublished rows and the oldest one's age in seconds by the database's clock (found by id, the partial index). */
export async function backlog(q: Queryable): Promise<{ n: number; age: number | null }> {
  const { rows } = await q.query<{ n: number; age: number | null }>(
    `SELECT count(*)::int AS n,
                      (SELECT EXTRACT(EPOCH FROM now() - created_at)::float8 FROM agent_runtime.outbox
                        WHERE published_at IS NULL ORDER BY id LIMIT 1) AS age
                 FROM agent_runtime.outbox WHERE published_at IS NULL`,
  );
  return { n: rows[0]?.n ?? 0, age: rows[0]?.age ?? null };
}

/** Published rows have done their work (the audit records stay in their log tables). */
export const prune = pruneTarget(TABLE, 'published_at IS NOT NULL');
