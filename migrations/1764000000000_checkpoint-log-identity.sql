-- Up Migration
-- The command at next_offset - 1 (docs/operations.md#retention): a log that does not hold it
-- there (the topic was recreated, the broker replaced) is another log, and the stored position
-- is not trusted for it.
ALTER TABLE agent_runtime.projector_checkpoints ADD COLUMN last_command_id uuid;

-- Down Migration
ALTER TABLE agent_runtime.projector_checkpoints DROP COLUMN last_command_id;
