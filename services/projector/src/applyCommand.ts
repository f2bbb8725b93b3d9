import type { PoolClient } from '@ingest/db';
import type { Command } from '@ingest/domain';
import type { TopicNames } from '@ingest/kafka';
import { projectCommand } from './handleCommand.ts';
import { claimCommand, lockShop, storeResult, writeOutbox, type CommandPosition } from './runtimeStore.ts';

/**
 * One command inside a transaction: claim (D4), lock its shop, project, and, live only, its outbox rows (D5) and
 * stored reply (D6). A replay gates those side effects: its events were published live and its
 * callers were answered live (D26). False when the command was already applied.
 */
export async function applyCommand(
  tx: PoolClient,
  c: Command,
  at: CommandPosition,
  sideEffects: { topics: TopicNames } | null,
): Promise<boolean> {
  if (!(await claimCommand(tx, c, at))) return false;
  await lockShop(tx, c.shop);
  const { reply, events } = await projectCommand(tx, c);
  if (sideEffects) {
    await writeOutbox(tx, events, sideEffects.topics);
    await storeResult(tx, c, reply);
  }
  return true;
}

/**
 * Postgres errors a retry cannot fix: the command's data itself is at fault (22 data exception,
 * 23 integrity, 54 program limit such as an index row too large). Validation should have refused
 * such data at the edge; this keeps one bad command from stalling its partition if it did not.
 */
export function isDeterministicDbError(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' && /^(22|23|54)/.test(code);
}
