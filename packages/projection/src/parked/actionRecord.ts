import { operatorActions, outbox, parkedCommands, type Queryable } from '@ingest/db';
import { operatorActionEvent } from '@ingest/domain';
import type { TopicNames } from '@ingest/kafka';
import { outboxRows } from '../applyCommand.ts';

export type OperatorAction = operatorActions.OperatorAction;

/** The longest reason an operator may give (the API's schemas and the table's CHECK say the same). */
export const REASON_MAX = 1000;

/**
 * What is wrong with an operator's reason, in the API's words (`reason required`), or null when it
 * will do: at most REASON_MAX characters, not blank; required for a skip.
 */
export function reasonProblem(reason: string | null | undefined, required: boolean): string | null {
  if (reason === null || reason === undefined) return required ? 'reason required' : null;
  if (!/\S/.test(reason)) return 'reason required';
  if ([...reason].length > REASON_MAX) return `reason must be at most ${REASON_MAX} characters`;
  return null;
}

/** Who resolves a parked command, and why (docs/operations.md#parked-commands). */
export interface ActedBy {
  /** `platform`, a key id, or `cli:<os user>`. */
  actor: string;
  reason?: string | null;
}

/** The action as it begins, before any of its transactions. */
export function beginAction(
  fields: { action: operatorActions.OperatorActionKind; command_id: string; shop: string; hold: boolean },
  by: ActedBy,
  clock: { now: () => Date; newId: () => string },
): OperatorAction {
  return {
    action_id: clock.newId(),
    ...fields,
    actor: by.actor,
    reason: by.reason ?? null,
    outcome: { applied: [], failed: null, remaining: null },
    created_at: clock.now(),
    finished_at: null,
  };
}

/** A step of the action, in the transaction of that step: the commands applied so far. */
export async function recordStep(tx: Queryable, a: OperatorAction, applied: string[]): Promise<void> {
  await operatorActions.record(tx, { ...a, outcome: { ...a.outcome, applied } });
}

/**
 * The action's last step, in its transaction: what stays parked for the shop, the finished row,
 * and its audit event in the outbox (D5), published by the relay once this commits.
 */
export async function recordEnd(
  tx: Queryable,
  a: OperatorAction,
  outcome: Pick<operatorActions.ActionOutcome, 'applied' | 'failed'>,
  topics: TopicNames,
  now: () => Date,
): Promise<OperatorAction> {
  const remaining = await parkedCommands.countOpenOfShop(tx, a.shop);
  const finishedAt = now();
  const done: OperatorAction = { ...a, outcome: { ...outcome, remaining }, finished_at: finishedAt };
  await operatorActions.record(tx, done);
  const event = operatorActionEvent({
    action_id: done.action_id,
    action: done.action,
    command_id: done.command_id,
    shop: done.shop,
    actor: done.actor,
    reason: done.reason,
    hold: done.hold,
    outcome: { applied: outcome.applied, failed: outcome.failed, remaining },
    occurred_at: finishedAt.toISOString(),
  });
  await outbox.storeEvents(tx, outboxRows([event], topics));
  return done;
}
