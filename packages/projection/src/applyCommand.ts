import { outbox, parkedCommands, processedCommands, type CommandPosition, type PoolClient } from '@ingest/db';
import type { Command, OutboxEvent } from '@ingest/domain';
import type { TopicNames } from '@ingest/kafka';
import { eventTraceHeaders } from './eventTrace.ts';
import { projectCommand } from './projectCommand.ts';

export type ApplyOutcome = 'applied' | 'duplicate' | 'parked';

export interface ApplyOptions {
  /**
   * Outbox rows (D5) and the stored reply (D6): live only; a replay's were published and answered
   * live (D26). `recordHeaders`: the command's Kafka record headers, whose trace context its
   * events carry when tracing is off here (eventTrace.ts).
   */
  sideEffects: { topics: TopicNames; recordHeaders?: Record<string, string> } | null;
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
  if (!(await processedCommands.claimAndLock(tx, c, at, opts.checkpoint ?? false))) return 'duplicate';
  if (opts.parkBehind) {
    const blocker = await parkedCommands.firstOpen(tx, c.shop);
    if (blocker) {
      // Not applied: its claim goes, so that retrying it later applies it.
      await processedCommands.unclaim(tx, c.command_id);
      await parkedCommands.park(tx, {
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
    const trace = eventTraceHeaders(opts.sideEffects.recordHeaders);
    await outbox.storeOutcome(tx, c, reply, outboxRows(events, opts.sideEffects.topics, trace));
  }
  return 'applied';
}

/** Events as outbox rows: each channel goes to its configured topic, with the command's trace context (eventTrace.ts). */
export function outboxRows(events: OutboxEvent[], topics: TopicNames, trace: Record<string, string> = {}): outbox.OutboxInsert[] {
  const topicOf = { audit: topics.audit, stock_zero: topics.stockZero, stock_restored: topics.stockRestored };
  return events.map((e) => ({
    event_id: e.event_id,
    topic: topicOf[e.channel],
    message_key: e.key,
    headers: { ...e.headers, ...trace },
    payload: e.payload,
    command_id: e.command_id,
    log_table: e.log_table ?? null,
  }));
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
