-- Up Migration
-- The Idempotency-Key header (draft-ietf-httpapi-idempotency-key-header) on every POST.
-- One row per (credential, shop, key): the request's fingerprint and the command it started. The
-- command id is recorded here, in the same statement as its command_requests row, before it is
-- appended: a retry finds the answer in command_results (what GET /api/commands/{id} reads), or
-- re-sends the same command id after the lease (the projector's claim, D4, applies it once).
-- Not agent_runtime.idempotency_keys: that is the delta body key of D19, a different scope.
CREATE TABLE agent_runtime.request_keys (
  -- sha256 of the secret that authenticated the request, never the secret.
  credential text NOT NULL,
  shop text NOT NULL,
  key text NOT NULL,
  fingerprint text NOT NULL,
  command_id uuid NOT NULL,
  received_at timestamptz NOT NULL,
  -- Until then the first request is in flight (409 to a retry); after, a retry takes it over.
  lease_until timestamptz NOT NULL,
  -- Set when a 202 was given: a retry answers 202 again until the result is known.
  answered boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (credential, shop, key)
);
-- The pruner's batches (IDEMPOTENCY_KEY_TTL).
CREATE INDEX request_keys_created_at_idx ON agent_runtime.request_keys (created_at);
GRANT SELECT, INSERT, UPDATE, DELETE ON agent_runtime.request_keys TO ingest_service;

-- Down Migration
DROP TABLE agent_runtime.request_keys;
