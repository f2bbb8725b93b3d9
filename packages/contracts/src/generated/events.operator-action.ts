// Generated from schemas/events/operator-action.json by scripts/gen-types.ts. Do not edit.

/**
 * An operator's retry or skip of a parked command (docs/operations.md#parked-commands), from the CLI or the operator API, published on the audit topic by the outbox relay (D5) once the action ended. key = shop.
 */
export interface OperatorAction {
  /**
   * Derived from (command_id, operator_action, action_id): the same on every delivery.
   */
  event_id: string;
  event_type: 'operator_action';
  schema_version: 1;
  /**
   * The action's row in agent_runtime.operator_actions.
   */
  action_id: string;
  action: 'retry' | 'skip';
  /**
   * The parked command the operator named.
   */
  command_id: string;
  shop: string;
  /**
   * Who acted: `platform` (the shared ingest secret), a key id (`key_…`), or `cli:<os user>`.
   */
  actor: string;
  /**
   * The operator's reason; required for a skip.
   */
  reason: string | null;
  /**
   * A skip that left the commands behind it parked (`hold`); false for a retry.
   */
  hold: boolean;
  outcome: {
    /**
     * The shop's parked commands the action applied, in log order (D2).
     */
    applied: string[];
    /**
     * The command that failed again and stays parked (the action stopped there); null when none did.
     */
    failed: null | {
      command_id: string;
      error: string;
    };
    /**
     * Open parked commands of the shop once the action ended.
     */
    remaining: number;
  };
  /**
   * When the action ended.
   */
  occurred_at: string;
}
