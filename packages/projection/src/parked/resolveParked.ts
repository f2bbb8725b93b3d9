import { randomUUID } from 'node:crypto';
import type { SchemaRegistry } from '@ingest/contracts';
import { commandResults, lockShop, parkedCommands, processedCommands, withTransaction, type Pool } from '@ingest/db';
import { isUuid } from '@ingest/domain';
import type { TopicNames } from '@ingest/kafka';
import { applyCommand } from '../applyCommand.ts';
import { createCommandDecoder } from '../decodeCommand.ts';
import { beginAction, reasonProblem, recordEnd, recordStep, type ActedBy, type OperatorAction } from './actionRecord.ts';

export type ParkedRow = parkedCommands.ParkedRow;

/** What resolving a parked command needs: the database, the command schemas, and where outbox rows go. */
export interface ParkedDeps {
  pool: Pool;
  schemas: SchemaRegistry;
  topics: TopicNames;
  now?: () => Date;
  newId?: () => string;
}

/** The command named is not an open parked command (never parked, already resolved, or not a command id). */
export class NotOpenParked extends Error {
  readonly commandId: string;
  constructor(commandId: string) {
    super(`no open parked command ${commandId}`);
    this.commandId = commandId;
  }
}

/** What an action did (agent_runtime.operator_actions), as the CLI prints it and the API answers it. */
export interface ActionResult {
  action_id: string;
  action: 'retry' | 'skip';
  command_id: string;
  shop: string;
  actor: string;
  hold: boolean;
  /** The shop's parked commands applied, in log order (D2). */
  applied: string[];
  /** The one that failed again: it stays parked with this error, and the action stopped there. */
  failed: { command_id: string; error: string } | null;
  /** Open parked commands of the shop once the action ended. */
  remaining: number;
}

/** Open parked commands, by shop and in log order (the order they will be applied in). */
export function listParked(pool: Pool): Promise<ParkedRow[]> {
  return parkedCommands.listOpen(pool);
}

/**
 * Applies the parked commands of `commandId`'s shop in log order (D2) until none is left, or one
 * fails again (it stays parked with its new error, and the retry stops there).
 */
export async function retryParked(deps: ParkedDeps, commandId: string, by: ActedBy): Promise<ActionResult> {
  const problem = reasonProblem(by.reason, false);
  if (problem) throw new Error(problem);
  const shop = await shopOf(deps.pool, commandId);
  const a = beginAction({ action: 'retry', command_id: commandId, shop, hold: false }, by, clockOf(deps));
  return applyInLogOrder(deps, a);
}

/**
 * Skips one parked command: it is never applied. Its caller's answer becomes 422 `skipped`, and
 * its claim is recorded so that a redelivery changes nothing. When it was the head of its shop's
 * queue, the commands parked behind it are then applied as a retry would (the shop resumes),
 * unless `hold` keeps them parked for a later retry or skip.
 */
export async function skipParked(deps: ParkedDeps, commandId: string, by: ActedBy & { hold?: boolean }): Promise<ActionResult> {
  const problem = reasonProblem(by.reason, true);
  if (problem) throw new Error(problem);
  const shop = await shopOf(deps.pool, commandId);
  const hold = by.hold ?? false;
  const clock = clockOf(deps);
  const a = beginAction({ action: 'skip', command_id: commandId, shop, hold }, by, clock);
  const ended = await withTransaction(deps.pool, async (tx) => {
    await lockShop(tx, shop);
    const head = await parkedCommands.firstOpen(tx, shop);
    const row = await parkedCommands.markSkipped(tx, commandId);
    if (!row) throw new NotOpenParked(commandId);
    const c = { command_id: commandId, shop, kind: row.kind, received_at: row.parked_at.toISOString() };
    await processedCommands.claim(tx, c, { topic: row.kafka_topic, partition: row.kafka_partition, offset: row.kafka_offset });
    await commandResults.store(tx, c, {
      status: 422,
      body: { ok: false, error_kind: 'skipped', error: `skipped by an operator after it was parked: ${row.error}` },
    });
    // Behind another parked command, the shop stays halted by that one: nothing to resume.
    if (hold || head !== commandId) return recordEnd(tx, a, { applied: [], failed: null }, deps.topics, clock.now);
    await recordStep(tx, a, []);
    return null;
  });
  return ended ? resultOf(ended) : applyInLogOrder(deps, a);
}

/**
 * The shop's parked commands, first open one first, each in its own transaction with its outbox
 * rows, stored reply and the action's record of it. The live projector parks the shop's new
 * commands behind them meanwhile and both take the shop lock, so none slips past.
 */
async function applyInLogOrder(deps: ParkedDeps, a: OperatorAction): Promise<ActionResult> {
  const decode = createCommandDecoder(deps.schemas);
  const { now } = clockOf(deps);
  let applied: string[] = [];
  for (;;) {
    const taken: { id: string | null } = { id: null };
    try {
      const ended = await withTransaction(deps.pool, async (tx) => {
        await lockShop(tx, a.shop);
        const row = await parkedCommands.takeFirstOpen(tx, a.shop);
        if (!row) return recordEnd(tx, a, { applied, failed: null }, deps.topics, now);
        taken.id = row.command_id;
        const decoded = decode(row.message);
        if (!decoded.ok) throw new Error(`cannot be applied (${decoded.error}); skip it`);
        const at = { topic: row.kafka_topic, partition: row.kafka_partition, offset: row.kafka_offset };
        await applyCommand(tx, decoded.command, at, { sideEffects: { topics: deps.topics } });
        await parkedCommands.markRetried(tx, row.command_id);
        await recordStep(tx, a, [...applied, row.command_id]);
        return null;
      });
      if (ended) return resultOf(ended);
      if (taken.id) applied = [...applied, taken.id];
    } catch (err) {
      const failedId = taken.id;
      if (!failedId) throw err;
      const error = err instanceof Error ? err.message : String(err);
      const ended = await withTransaction(deps.pool, async (tx) => {
        await parkedCommands.recordFailedRetry(tx, failedId, error);
        return recordEnd(tx, a, { applied, failed: { command_id: failedId, error } }, deps.topics, now);
      });
      return resultOf(ended);
    }
  }
}

async function shopOf(pool: Pool, commandId: string): Promise<string> {
  const shop = isUuid(commandId) ? await parkedCommands.shopOfOpen(pool, commandId) : null;
  if (shop === null) throw new NotOpenParked(commandId);
  return shop;
}

const clockOf = (deps: ParkedDeps): { now: () => Date; newId: () => string } => ({
  now: deps.now ?? (() => new Date()),
  newId: deps.newId ?? randomUUID,
});

function resultOf(a: OperatorAction): ActionResult {
  return {
    action_id: a.action_id,
    action: a.action,
    command_id: a.command_id,
    shop: a.shop,
    actor: a.actor,
    hold: a.hold,
    applied: a.outcome.applied,
    failed: a.outcome.failed,
    remaining: a.outcome.remaining ?? 0,
  };
}
