import type { SchemaRegistry } from '@ingest/contracts';
import { withTransaction, type Pool } from '@ingest/db';
import type { TopicNames } from '@ingest/kafka';
import { applyCommand, claimCommand, createCommandDecoder, lockShop, storeResult } from '@ingest/projection';

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
export async function listParked(pool: Pool): Promise<ParkedRow[]> {
  const { rows } = await pool.query<ParkedRow>(
    `SELECT command_id, shop, kind, kafka_partition, kafka_offset, error, attempts, behind, parked_at
       FROM agent_runtime.parked_commands WHERE resolved_at IS NULL
      ORDER BY shop, kafka_topic, kafka_partition, kafka_offset`,
  );
  return rows;
}

async function shopOf(pool: Pool, commandId: string): Promise<string> {
  const { rows } = await pool.query<{ shop: string }>(
    'SELECT shop FROM agent_runtime.parked_commands WHERE command_id = $1 AND resolved_at IS NULL',
    [commandId],
  );
  if (!rows[0]) throw new Error(`no open parked command ${commandId}`);
  return rows[0].shop;
}

export type RetryResult = { applied: string[]; failed: null } | { applied: string[]; failed: { command_id: string; error: string } };

/**
 * Applies the parked commands of `commandId`'s shop in log order (D2), each in its own
 * transaction with its outbox rows and stored reply, until none is left. The live projector parks
 * the shop's new commands behind them meanwhile and both take the shop lock, so none slips past.
 * A command that fails again stays parked with its new error and the retry stops there.
 */
export async function retryParked(pool: Pool, schemas: SchemaRegistry, topics: TopicNames, commandId: string): Promise<RetryResult> {
  const shop = await shopOf(pool, commandId);
  const decode = createCommandDecoder(schemas);
  const applied: string[] = [];
  for (;;) {
    let current: string | null = null;
    try {
      const done = await withTransaction(pool, async (tx) => {
        await lockShop(tx, shop);
        const { rows } = await tx.query<{
          command_id: string;
          kafka_topic: string;
          kafka_partition: number;
          kafka_offset: string;
          message: Buffer;
        }>(
          `SELECT command_id, kafka_topic, kafka_partition, kafka_offset::text, message FROM agent_runtime.parked_commands
            WHERE shop = $1 AND resolved_at IS NULL ORDER BY kafka_topic, kafka_partition, kafka_offset LIMIT 1 FOR UPDATE`,
          [shop],
        );
        const row = rows[0];
        if (!row) return true;
        current = row.command_id;
        const decoded = decode(row.message);
        if (!decoded.ok) throw new Error(`cannot be applied (${decoded.error}); skip it`);
        const at = { topic: row.kafka_topic, partition: row.kafka_partition, offset: row.kafka_offset };
        await applyCommand(tx, decoded.command, at, { sideEffects: { topics } });
        await tx.query(`UPDATE agent_runtime.parked_commands SET resolved_at = now(), resolution = 'retried' WHERE command_id = $1`, [
          row.command_id,
        ]);
        return false;
      });
      if (done) return { applied, failed: null };
      if (current) applied.push(current);
    } catch (err) {
      if (!current) throw err;
      const error = err instanceof Error ? err.message : String(err);
      await pool.query(
        'UPDATE agent_runtime.parked_commands SET error = $2, attempts = attempts + 1, behind = NULL WHERE command_id = $1',
        [current, error],
      );
      return { applied, failed: { command_id: current, error } };
    }
  }
}

/**
 * Skips one parked command: it is never applied. Its caller's answer becomes 422 `skipped`, and
 * its claim is recorded so that a redelivery changes nothing. The shop's later parked commands stay
 * parked until they are retried (or skipped).
 */
export async function skipParked(pool: Pool, commandId: string): Promise<{ remaining: number }> {
  const shop = await shopOf(pool, commandId);
  return withTransaction(pool, async (tx) => {
    await lockShop(tx, shop);
    const { rows } = await tx.query<{
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
    const row = rows[0];
    if (!row) throw new Error(`no open parked command ${commandId}`);
    const c = { command_id: commandId, shop, kind: row.kind, received_at: row.parked_at.toISOString() };
    await claimCommand(tx, c, { topic: row.kafka_topic, partition: row.kafka_partition, offset: row.kafka_offset });
    await storeResult(tx, c, {
      status: 422,
      body: { ok: false, error_kind: 'skipped', error: `skipped by an operator after it was parked: ${row.error}` },
    });
    const left = await tx.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM agent_runtime.parked_commands WHERE shop = $1 AND resolved_at IS NULL',
      [shop],
    );
    return { remaining: left.rows[0]?.n ?? 0 };
  });
}
