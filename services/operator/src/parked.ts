import type { SchemaRegistry } from '@ingest/contracts';
import { commandResults, lockShop, parkedCommands, processedCommands, withTransaction, type Pool } from '@ingest/db';
import type { TopicNames } from '@ingest/kafka';
import { applyCommand, createCommandDecoder } from '@ingest/projection';

export type ParkedRow = parkedCommands.ParkedRow;

/** Open parked commands, by shop and in log order (the order they will be applied in). */
export function listParked(pool: Pool): Promise<ParkedRow[]> {
  return parkedCommands.listOpen(pool);
}

async function shopOf(pool: Pool, commandId: string): Promise<string> {
  const shop = await parkedCommands.shopOfOpen(pool, commandId);
  if (shop === null) throw new Error(`no open parked command ${commandId}`);
  return shop;
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
        const row = await parkedCommands.takeFirstOpen(tx, shop);
        if (!row) return true;
        current = row.command_id;
        const decoded = decode(row.message);
        if (!decoded.ok) throw new Error(`cannot be applied (${decoded.error}); skip it`);
        const at = { topic: row.kafka_topic, partition: row.kafka_partition, offset: row.kafka_offset };
        await applyCommand(tx, decoded.command, at, { sideEffects: { topics } });
        await parkedCommands.markRetried(tx, row.command_id);
        return false;
      });
      if (done) return { applied, failed: null };
      if (current) applied.push(current);
    } catch (err) {
      if (!current) throw err;
      const error = err instanceof Error ? err.message : String(err);
      await parkedCommands.recordFailedRetry(pool, current, error);
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
    const row = await parkedCommands.markSkipped(tx, commandId);
    if (!row) throw new Error(`no open parked command ${commandId}`);
    const c = { command_id: commandId, shop, kind: row.kind, received_at: row.parked_at.toISOString() };
    await processedCommands.claim(tx, c, { topic: row.kafka_topic, partition: row.kafka_partition, offset: row.kafka_offset });
    await commandResults.store(tx, c, {
      status: 422,
      body: { ok: false, error_kind: 'skipped', error: `skipped by an operator after it was parked: ${row.error}` },
    });
    return { remaining: await parkedCommands.countOpenOfShop(tx, shop) };
  });
}
