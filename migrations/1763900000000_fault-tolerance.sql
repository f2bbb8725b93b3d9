-- Up Migration
-- Poison isolation (docs/operations.md#parked-commands): a command that fails for a reason
-- retrying will not fix is parked here with its error, and the later commands of its shop wait
-- behind it, parked in order too (D2: per-shop order), while other shops keep flowing. An
-- operator resolves a shop's parked commands with `npm run parked -- retry|skip <id>`.
CREATE TABLE agent_runtime.parked_commands (
  command_id      uuid PRIMARY KEY,
  shop            text NOT NULL,
  kind            text NOT NULL,
  kafka_topic     text NOT NULL,
  kafka_partition integer NOT NULL,
  kafka_offset    bigint NOT NULL,
  message         bytea NOT NULL,               -- the command as it was read from the log
  error           text NOT NULL,
  attempts        integer NOT NULL,
  behind          uuid,                         -- the command it waits behind; NULL for the one that failed
  parked_at       timestamptz NOT NULL DEFAULT now(),
  resolved_at     timestamptz,
  resolution      text CHECK (resolution IN ('retried', 'skipped')),
  CHECK ((resolved_at IS NULL) = (resolution IS NULL))
);
CREATE INDEX parked_commands_open_idx ON agent_runtime.parked_commands (shop, kafka_topic, kafka_partition, kafka_offset)
  WHERE resolved_at IS NULL;

-- Bounded state (docs/operations.md#retention): exactly-once rests on each partition's applied
-- position, stored in the projection's transaction (projector = 'live'); per-command markers are
-- only kept for a window that covers producer retries, stored results and requests for a documented
-- window, and published outbox rows are deleted. These indexes let the background pruning find old
-- rows in small batches.
CREATE INDEX processed_commands_processed_at_idx ON agent_runtime.processed_commands (processed_at);
CREATE INDEX command_results_created_at_idx ON agent_runtime.command_results (created_at);
CREATE INDEX command_requests_received_at_idx ON agent_runtime.command_requests (received_at);
CREATE INDEX outbox_published_idx ON agent_runtime.outbox (id) WHERE published_at IS NOT NULL;

-- The span of command times whose results or requests were pruned: an id from that span with
-- nothing stored answers 410 `expired` (GET /api/commands/{id}); an id from outside it, 404.
CREATE TABLE agent_runtime.pruned_span (
  what    text PRIMARY KEY,
  oldest  timestamptz NOT NULL,
  newest  timestamptz NOT NULL
);

-- A database projected before this migration starts from the positions its markers show.
INSERT INTO agent_runtime.projector_checkpoints (projector, kafka_topic, kafka_partition, next_offset)
SELECT 'live', kafka_topic, kafka_partition, max(kafka_offset) + 1
  FROM agent_runtime.processed_commands
 GROUP BY kafka_topic, kafka_partition
ON CONFLICT DO NOTHING;

-- One publisher (docs/operations.md "Faults and outages"): the relay that holds the advisory
-- lock renews this lease on its locked session before each batch; a relay that takes the lock
-- over waits until the previous holder's last renewal is older than the fence, so a batch the
-- old leader had in flight has ended first.
CREATE TABLE agent_runtime.relay_lease (
  id         integer PRIMARY KEY CHECK (id = 1),
  holder     text NOT NULL,
  renewed_at timestamptz NOT NULL
);

GRANT SELECT, INSERT, UPDATE, DELETE ON agent_runtime.parked_commands, agent_runtime.relay_lease, agent_runtime.pruned_span TO ingest_service;

-- Down Migration
DROP INDEX agent_runtime.outbox_published_idx;
DROP INDEX agent_runtime.command_requests_received_at_idx;
DROP INDEX agent_runtime.command_results_created_at_idx;
DROP INDEX agent_runtime.processed_commands_processed_at_idx;
DELETE FROM agent_runtime.projector_checkpoints WHERE projector = 'live';
DROP TABLE agent_runtime.pruned_span;
DROP TABLE agent_runtime.relay_lease;
DROP TABLE agent_runtime.parked_commands;
