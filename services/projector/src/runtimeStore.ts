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
  const r = await tx.query(
    `INSERT INTO processed_commands
       (command_id, shop, kind, kafka_topic, kafka_partition, kafka_offset, received_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7)
     ON CONFLICT (command_id) DO NOTHING`,
    [c.command_id, c.shop, c.kind, at.topic, at.partition, at.offset, c.received_at],
  );
  return r.rowCount === 1;
}

/**
 * Serialises the transactions that write one shop's rows, for the rest of this transaction. The
 * shop's commands share a partition and are claimed in order, so this only matters when they do
 * not (the topic was repartitioned, or a second projector group runs by mistake); one lock instead
 * of FOR UPDATE on every loaded row, which wrote a lock into each of a snapshot's 10,000 tuples.
 * Keyed by the schema as well, so a rebuild in a shadow schema (D26) never waits for live.
 */
export async function lockShop(tx: PoolClient, shop: string): Promise<void> {
  await tx.query(`SELECT pg_advisory_xact_lock(hashtextextended(current_schema() || '/' || $1, 0))`, [shop]);
}

/** Stores the reply and wakes the waiting gateways (NOTIFY is delivered on commit). */
export async function storeResult(
  tx: PoolClient,
  c: { command_id: string; shop: string; kind: string },
  reply: Reply,
): Promise<void> {
  await tx.query(
    `WITH r AS (
       INSERT INTO agent_runtime.command_results (command_id, shop, kind, status_code, body)
       VALUES ($1, $2, $3, $4, $5) ON CONFLICT (command_id) DO NOTHING RETURNING command_id)
     SELECT pg_notify('command_results', $1::text) FROM r`,
    [c.command_id, c.shop, c.kind, reply.status, JSON.stringify(reply.body)],
  );
}

export async function writeOutbox(tx: PoolClient, events: OutboxEvent[], topics: TopicNames): Promise<void> {
  if (events.length === 0) return;
  const topicOf = { audit: topics.audit, stock_zero: topics.stockZero, stock_restored: topics.stockRestored };
  const rows = events.map((e) => ({
    event_id: e.event_id,
    topic: topicOf[e.channel],
    message_key: e.key,
    headers: e.headers,
    payload: e.payload,
    command_id: e.command_id,
    log_table: e.log_table ?? null,
  }));
  await tx.query(
    `WITH ins AS (
       INSERT INTO agent_runtime.outbox (event_id, topic, message_key, headers, payload, command_id, log_table)
       SELECT event_id, topic, message_key, headers, payload, command_id, log_table
         FROM jsonb_to_recordset($1::jsonb) AS x(event_id uuid, topic text, message_key text, headers jsonb,
              payload jsonb, command_id uuid, log_table text)
       ON CONFLICT (event_id) DO NOTHING RETURNING 1)
     SELECT pg_notify('outbox', '') WHERE EXISTS (SELECT 1 FROM ins)`,
    [JSON.stringify(rows)],
  );
}
