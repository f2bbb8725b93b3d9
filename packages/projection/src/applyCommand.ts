import type { PoolClient } from '@ingest/db';
import type { Command } from '@ingest/domain';
import type { TopicNames } from '@ingest/kafka';
import { projectCommand } from './projectCommand.ts';
import { claimAndLock, openParkedCommand, parkCommand, storeOutcome, type CommandPosition } from './runtimeStore.ts';

export type ApplyOutcome = 'applied' | 'duplicate' | 'parked';

export interface ApplyOptions {
  /** Outbox rows (D5) and the stored reply (D6): live only; a replay's were published and answered live (D26). */
  sideEffects: { topics: TopicNames } | null;
  /** The live consumer moves its partition's position in the same transaction (docs/operations.md#retention). */
  checkpoint?: boolean;
  /** Live: a command of a shop with a parked command is parked behind it (D2), with its message. */
  parkBehind?: { message: Buffer } | null;
}

/**
 * One command inside a transaction: claim (D4), position, lock its shop, and either park it behind
 * the shop's parked command or project it, with its outbox rows and stored reply. The claim comes
 * first: an in-place rebuild's swap locks the claims table to find no live transaction half way.
 */
export async function applyCommand(tx: PoolClient, c: Command, at: CommandPosition, opts: ApplyOptions): Promise<ApplyOutcome> {
  if (!(await claimAndLock(tx, c, at, opts.checkpoint ?? false))) return 'duplicate';
  if (opts.parkBehind) {
    const blocker = await openParkedCommand(tx, c.shop);
    if (blocker) {
      // Not applied: its claim goes, so that retrying it later applies it.
      await tx.query('DELETE FROM processed_commands WHERE command_id = $1', [c.command_id]);
      await parkCommand(tx, {
        command_id: c.command_id,
        shop: c.shop,
        kind: c.kind,
        at,
        message: opts.parkBehind.message,
        error: `waiting behind parked command ${blocker}`,
        attempts: 0,
        behind: blocker,
      });
      return 'parked';
    }
  }
  const { reply, events } = await projectCommand(tx, c);
  if (opts.sideEffects) {
    await storeOutcome(tx, c, reply, events, opts.sideEffects.topics);
  }
  return 'applied';
}

/**
 * Postgres errors a retry cannot fix: the command's data itself is at fault (22 data exception,
 * 23 integrity, 54 program limit such as an index row too large). A replay skips such a command
 * (it was parked live); the live projector parks it after its bounded retries.
 */
export function isDeterministicDbError(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' && /^(22|23|54)/.test(code);
}
