-- Up Migration
-- D28: per-shop API keys. A key is 256 random bits shown once at creation; only its keyed hash
-- (HMAC-SHA-256 with a server-side pepper, API_KEY_PEPPER) is stored, so this table alone (a
-- backup, a read replica, a leaked dump) cannot authenticate anyone.
CREATE TABLE agent_runtime.api_keys (
  key_id text PRIMARY KEY CHECK (key_id ~ '^key_[0-9a-f]{16}$'),
  shop text NOT NULL CHECK (length(shop) BETWEEN 1 AND 255),
  scopes text[] NOT NULL CHECK (cardinality(scopes) >= 1),
  note text CHECK (note IS NULL OR length(note) <= 500),
  key_hash bytea NOT NULL UNIQUE,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz,
  revoked_at timestamptz,
  -- Written in batches by the gateways (at most a few seconds behind), never on a request's path.
  last_used_at timestamptz
);
-- GET /api/admin/keys?shop= lists a shop's keys in creation order.
CREATE INDEX api_keys_shop_idx ON agent_runtime.api_keys (shop, created_at);

-- Every change of a key (revocation, above all) is announced on commit: each gateway drops the key
-- from its cache at once (D28: revocation effective on every gateway within 1 s). A trigger, so a
-- revocation made with SQL by hand is announced too.
CREATE FUNCTION agent_runtime.api_keys_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('api_keys', COALESCE(NEW.key_id, OLD.key_id));
  RETURN NULL;
END $$;
-- last_used_at alone changes nothing a gateway caches.
CREATE TRIGGER api_keys_changed AFTER UPDATE OF shop, scopes, key_hash, expires_at, revoked_at OR DELETE
  ON agent_runtime.api_keys FOR EACH ROW EXECUTE FUNCTION agent_runtime.api_keys_notify();
GRANT SELECT, INSERT, UPDATE, DELETE ON agent_runtime.api_keys TO ingest_service;

-- Down Migration
DROP TABLE agent_runtime.api_keys;
DROP FUNCTION agent_runtime.api_keys_notify();
