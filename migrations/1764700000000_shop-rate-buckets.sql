-- Up Migration
-- The lines/s budget of each shop across every gateway (docs/api.md#fair-admission-per-shop): one
-- token bucket per shop, from which each gateway leases tokens in chunks (about a second of the
-- shop's rate) and spends them locally, so a shop's rate is the same however many replicas serve it
-- and a request costs no database round trip while its gateway holds tokens.
-- UNLOGGED: a bucket is a few seconds of state, worth no WAL; after a crash (or on a replica) it
-- starts full again, which is what an idle shop's bucket is anyway.
CREATE UNLOGGED TABLE agent_runtime.shop_rate_buckets (
  shop text PRIMARY KEY,
  tokens double precision NOT NULL,
  refilled_at timestamptz NOT NULL,
  -- What the last lease took (the statement's answer).
  granted double precision NOT NULL DEFAULT 0
);
GRANT SELECT, INSERT, UPDATE, DELETE ON agent_runtime.shop_rate_buckets TO ingest_service;

-- Down Migration
DROP TABLE agent_runtime.shop_rate_buckets;
