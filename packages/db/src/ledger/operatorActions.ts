import type { Queryable } from '../pool.ts';
import type { LedgerTable } from './types.ts';

/**
 * agent_runtime.operator_actions (docs/operations.md#parked-commands): every retry and skip of a
 * parked command, with who asked, why and what came of it. Kept (no pruning): an audit trail.
 */
export const TABLE: LedgerTable = { schema: 'agent_runtime', name: 'operator_actions', key: ['action_id'] };

export type OperatorActionKind = 'retry' | 'skip';

/** What an action did so far: the commands it applied in log order, the one that failed again, what stays parked. */
export interface ActionOutcome {
  applied: string[];
  failed: { command_id: string; error: string } | null;
  /** Open parked commands of the shop once the action ended; null while it runs. */
  remaining: number | null;
}

export interface OperatorAction {
  action_id: string;
  action: OperatorActionKind;
  command_id: string;
  shop: string;
  actor: string;
  reason: string | null;
  hold: boolean;
  outcome: ActionOutcome;
  created_at: Date;
  /** Set by the action's last transaction; null: it is running, or it was interrupted. */
  finished_at: Date | null;
}

/**
 * Writes the action as it stands, in the transaction of the step it records: the first step
 * inserts it, each later one replaces its outcome (and the last sets finished_at).
 */
export async function record(q: Queryable, a: OperatorAction): Promise<void> {
  await q.query(
    `INSERT INTO agent_runtime.operator_actions
       (action_id, action, command_id, shop, actor, reason, hold, outcome, created_at, finished_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
     ON CONFLICT (action_id) DO UPDATE SET outcome = EXCLUDED.outcome, finished_at = EXCLUDED.finished_at`,
    [a.action_id, a.action, a.command_id, a.shop, a.actor, a.reason, a.hold, JSON.stringify(a.outcome), a.created_at, a.finished_at],
  );
}

/** The actions on a command (the one an operator named), oldest first. */
export async function ofCommand(q: Queryable, commandId: string): Promise<OperatorAction[]> {
  const { rows } = await q.query<OperatorAction>(
    `SELECT action_id, action, command_id, shop, actor, reason, hold, outcome, created_at, finished_at
       FROM agent_runtime.operator_actions WHERE command_id = $1 ORDER BY created_at, action_id`,
    [commandId],
  );
  return rows;
}
