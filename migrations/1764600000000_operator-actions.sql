-- Up Migration
-- Every operator action on a parked command (docs/operations.md#parked-commands), from the CLI or
-- the operator API: who (`actor`), why (`reason`) and what came of it (`outcome`). The row is
-- written in the transactions of the action itself, its outcome growing with each command the
-- action applies, so it never says more or less than what was committed; `finished_at` is set in
-- the action's last transaction, with its audit event in the outbox (D5). Kept: it is the trail of
-- decisions that changed what the read model holds, so the services may add to it but not delete.
CREATE TABLE agent_runtime.operator_actions (
  action_id   uuid PRIMARY KEY,
  action      text NOT NULL CHECK (action IN ('retry', 'skip')),
  command_id  uuid NOT NULL,                   -- the parked command the operator named
  shop        text NOT NULL,
  actor       text NOT NULL,                   -- 'platform', a key id, or 'cli:<os user>'
  reason      text CHECK (char_length(reason) BETWEEN 1 AND 1000),
  hold        boolean NOT NULL DEFAULT false,  -- a skip that left the commands behind it parked
  outcome     jsonb NOT NULL,                  -- {applied: [command_id], failed: {command_id, error} | null, remaining}
  created_at  timestamptz NOT NULL,
  finished_at timestamptz
);
CREATE INDEX operator_actions_command_idx ON agent_runtime.operator_actions (command_id);
CREATE INDEX operator_actions_shop_idx ON agent_runtime.operator_actions (shop, created_at);
GRANT SELECT, INSERT, UPDATE ON agent_runtime.operator_actions TO ingest_service;

-- The operator API's failed commands (GET /api/admin/commands?status=failed), newest first by
-- keyset: partial, so the results that succeeded (nearly all) add no entry to it.
CREATE INDEX command_results_failed_idx ON agent_runtime.command_results (created_at, command_id) WHERE status_code >= 400;

-- Down Migration
DROP INDEX agent_runtime.command_results_failed_idx;
DROP TABLE agent_runtime.operator_actions;
