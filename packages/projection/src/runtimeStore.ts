import type { PoolClient } from '@ingest/db';
import type { OutboxEvent, Reply } from '@ingest/domain';
import type { TopicNames } from '@ingest/kafka';

export interface CommandPosition {
  topic: string;
  partition: number;
  offset: string;
}

/**
 * Claims the command for this transaction (D4). False when it was already processed: the
 * unique key also makes a concurrent duplicate wait for the first and then see it done.
 */
export async function claimCommand(
  tx: PoolClient,
  c: { command_id: string; shop: string; kind: string; received_at: string },
  at: CommandPosition,
): Promise<boolean> {
  const r = await tx.query(CLAIM_SQL, claimParams(c, at));
  return r.rowCount === 1;
}

/** The claim (D4): parameters $1..$7 as claimParams gives them. */
const CLAIM_SQL = `INSERT INTO processed_commands (command_id, shop, kind, kafka_topic, kafka_partition, kafka_offset, received_at)
  VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (command_id) DO NOTHING`;

const claimParams = (c: { command_id: string; shop: string; kind: string; received_at: string }, at: CommandPosition): unknown[] => [
  c.command_id,
  c.shop,
  c.kind,
  at.topic,
  at.partition,
  at.offset,
  c.received_at,
];

/**
 * Moves a partition's position past the command at `offset` unless it is there already (the
 * parameters' SQL names given; `when`: a condition for moving it at all).
 */
const advanceSql = (p: { projector: string; topic: string; partition: string; offset: string; commandId: string }, when = 'true'): string =>
  `INSERT INTO agent_runtime.projector_checkpoints (projector, kafka_topic, kafka_partition, next_offset, last_command_id, updated_at)
   SELECT ${p.projector}, ${p.topic}, ${p.partition}, ${p.offset}::bigint + 1, ${p.commandId}, now() WHERE ${when}
   ON CONFLICT (projector, kafka_topic, kafka_partition) DO UPDATE
     SET next_offset = EXCLUDED.next_offset, last_command_id = EXCLUDED.last_command_id, updated_at = EXCLUDED.updated_at
     WHERE projector_checkpoints.next_offset <= ${p.offset}::bigint`;

/**
 * Serialises the transactions that write one shop's rows, for the rest of this transaction. The
 * shop's commands share a partition and are claimed in order, so this only matters when they do
 * not (the topic was repartitioned, or a second projector group runs by mistake); one lock instead
 * of FOR UPDATE on every loaded row, which wrote a lock into each of a snapshot's 10,000 tuples.
 * Keyed by the schema as well, so a rebuild in a shadow schema (D26) never waits for live.
 */
export async function lockShop(tx: PoolClient, shop: string): Promise<void> {
  await tx.query(`SELECT pg_advisory_xact_lock(${shopLockKey('$1')})`, [shop]);
}

/** The advisory lock key of the shop in SQL parameter `param`, in the current schema (lockShop). */
const shopLockKey = (param: string): string => `hashtextextended(current_schema() || '/' || ${param}, 0)`;

/**
 * The start of a live command's transaction in one statement (it was three round trips, each a
 * wait for a core on a busy machine: B7): claims the command (claimCommand, D4), moves its
 * partition's position past it when `checkpoint` (advanceCheckpoint) and, only when both
 * say the command is new, locks its shop (lockShop). True: apply it; false: a duplicate. The lock
 * is taken after the claim, as before (the claims table is locked first, see applyCommand); what
 * must see the state after the lock (the parked check, the loads) runs in later statements.
 */
export async function claimAndLock(
  tx: PoolClient,
  c: { command_id: string; shop: string; kind: string; received_at: string },
  at: CommandPosition,
  checkpoint: boolean,
): Promise<boolean> {
  const { rows } = await tx.query<{ go: boolean }>(
    `WITH claim AS (${CLAIM_SQL} RETURNING 1),
     position AS (${advanceSql({ projector: '$8', topic: '$4', partition: '$5', offset: '$6', commandId: '$1' }, '$9::boolean')} RETURNING 1),
     go AS (
       SELECT EXISTS (SELECT 1 FROM claim) AND (NOT $9::boolean OR EXISTS (SELECT 1 FROM position)) AS go
     )
     SELECT go.go, (SELECT count(*) FROM (SELECT pg_advisory_xact_lock(${shopLockKey('$2')}) WHERE go.go) l) AS locked FROM go`,
    [...claimParams(c, at), LIVE_PROJECTOR, checkpoint],
  );
  return rows[0]?.go === true;
}

/** Stores the reply and wakes the waiting gateways (NOTIFY is delivered on commit). */
export async function storeResult(tx: PoolClient, c: { command_id: string; shop: string; kind: string }, reply: Reply): Promise<void> {
  await tx.query(`WITH r AS (${RESULT_SQL}) SELECT pg_notify('command_results', $1::text) FROM r`, resultParams(c, reply));
}

/** The stored reply (D6): parameters $1..$5 as resultParams gives them; returns its command id when new. */
const RESULT_SQL = `INSERT INTO agent_runtime.command_results (command_id, shop, kind, status_code, body)
  VALUES ($1, $2, $3, $4, $5) ON CONFLICT (command_id) DO NOTHING RETURNING command_id`;

const resultParams = (c: { command_id: string; shop: string; kind: string }, reply: Reply): unknown[] => [
  c.command_id,
  c.shop,
  c.kind,
  reply.status,
  JSON.stringify(reply.body),
];

/**
 * A projected command's side effects in one statement (two round trips before): its outbox rows (D5;
 * an event already there is kept) and its stored reply (D6, as storeResult), each with its NOTIFY
 * on commit (`outbox` only when a row was written).
 */
export async function storeOutcome(
  tx: PoolClient,
  c: { command_id: string; shop: string; kind: string },
  reply: Reply,
  events: OutboxEvent[],
  topics: TopicNames,
): Promise<void> {
  await tx.query(
    `WITH ins AS (
       INSERT INTO agent_runtime.outbox (event_id, topic, message_key, headers, payload, command_id, log_table)
       SELECT event_id, topic, message_key, headers, payload, command_id, log_table
         FROM jsonb_to_recordset($6::jsonb) AS x(event_id uuid, topic text, message_key text, headers jsonb,
              payload jsonb, command_id uuid, log_table text)
       ON CONFLICT (event_id) DO NOTHING RETURNING 1
     ), r AS (${RESULT_SQL})
     SELECT (SELECT pg_notify('outbox', '') WHERE EXISTS (SELECT 1 FROM ins)),
            (SELECT pg_notify('command_results', $1::text) FROM r)`,
    [...resultParams(c, reply), JSON.stringify(outboxRows(events, topics))],
  );
}

function outboxRows(events: OutboxEvent[], topics: TopicNames) {
  const topicOf = { audit: topics.audit, stock_zero: topics.stockZero, stock_restored: topics.stockRestored };
  return events.map((e) => ({
    event_id: e.event_id,
    topic: topicOf[e.channel],
    message_key: e.key,
    headers: e.headers,
    payload: e.payload,
    command_id: e.command_id,
    log_table: e.log_table ?? null,
  }));
}

/** The live projection's position: its checkpoint rows carry this projector name. */
export const LIVE_PROJECTOR = 'live';

/**
 * Moves the partition's applied position past this command, in the command's transaction
 * (checkpoint-in-transaction, docs/operations.md#retention): exactly-once rests on it, not on
 * keeping every marker. False when the position is already past it: the command was applied (or
 * parked) before, and this is a redelivery, a rebalance, or a consumer group reset to the
 * earliest offset.
 */
export async function advanceCheckpoint(tx: PoolClient, at: CommandPosition, commandId: string | null): Promise<boolean> {
  const r = await tx.query(advanceSql({ projector: '$1', topic: '$2', partition: '$3', offset: '$4', commandId: '$5' }), [
    LIVE_PROJECTOR,
    at.topic,
    at.partition,
    at.offset,
    commandId,
  ]);
  return r.rowCount === 1;
}

/** The next offset to apply on this partition (0 when nothing was applied yet), and the command just before it. */
export async function loadCheckpoint(
  q: Pick<PoolClient, 'query'>,
  topic: string,
  partition: number,
): Promise<{ next: number; lastCommandId: string | null }> {
  const { rows } = await q.query<{ next_offset: number; last_command_id: string | null }>(
    'SELECT next_offset, last_command_id FROM agent_runtime.projector_checkpoints WHERE projector = $1 AND kafka_topic = $2 AND kafka_partition = $3',
    [LIVE_PROJECTOR, topic, partition],
  );
  return { next: Number(rows[0]?.next_offset ?? 0), lastCommandId: rows[0]?.last_command_id ?? null };
}

/** Forgets a position that belongs to another log: from here on the markers keep the commands exactly-once. */
export async function resetCheckpoint(q: Pick<PoolClient, 'query'>, topic: string, partition: number): Promise<void> {
  await q.query(
    `UPDATE agent_runtime.projector_checkpoints SET next_offset = 0, last_command_id = NULL, updated_at = now()
      WHERE projector = $1 AND kafka_topic = $2 AND kafka_partition = $3`,
    [LIVE_PROJECTOR, topic, partition],
  );
}

/** The shop's first open parked command, if any: its later commands wait behind it (D2). */
export async function openParkedCommand(tx: PoolClient, shop: string): Promise<string | null> {
  const { rows } = await tx.query<{ command_id: string }>(
    `SELECT command_id FROM agent_runtime.parked_commands WHERE shop = $1 AND resolved_at IS NULL
      ORDER BY kafka_topic, kafka_partition, kafka_offset LIMIT 1`,
    [shop],
  );
  return rows[0]?.command_id ?? null;
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

/** Parks a command (docs/operations.md#parked-commands) and wakes its waiting caller, who is told it is parked. */
export async function parkCommand(tx: PoolClient, p: ParkedCommand): Promise<void> {
  await tx.query(
    `WITH ins AS (
       INSERT INTO agent_runtime.parked_commands
         (command_id, shop, kind, kafka_topic, kafka_partition, kafka_offset, message, error, attempts, behind)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
       ON CONFLICT (command_id) DO NOTHING RETURNING command_id)
     SELECT pg_notify('command_results', command_id::text) FROM ins`,
    [p.command_id, p.shop, p.kind, p.at.topic, p.at.partition, p.at.offset, p.message, p.error, p.attempts, p.behind],
  );
}
