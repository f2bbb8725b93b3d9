-- Up Migration
-- Set-based projection (docs/architecture.md): the snapshot's update-log ids are derived inside
-- PostgreSQL, with exactly the derivation of packages/domain/src/ids.ts logId (D3: derived only from
-- (command_id, n)). That needs SHA-1 (UUIDv5), which PostgreSQL has only through pgcrypto (a trusted
-- contrib extension on every managed PostgreSQL). If pgcrypto is already installed in some schema,
-- that one is used: the wrapper is created with the extension's schema written into it.
DO $$
DECLARE s text;
BEGIN
  CREATE EXTENSION IF NOT EXISTS pgcrypto;
  SELECT n.nspname INTO s FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pgcrypto';
  EXECUTE format(
    'CREATE OR REPLACE FUNCTION agent_runtime.sha1(bytea) RETURNS bytea LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS %L',
    format('SELECT %I.digest($1, %L)', s, 'sha1'));
END $$;

-- ids.ts logId(command_id, n): the command id's 48-bit UUIDv7 time, version 8, n in 18 bits (12 in
-- rand_a, 6 after the variant), then 56 bits of UUIDv5(LOG_NS, command_id || '\0' || n).
-- A property test (packages/projection/src/inventory/equivalence/logId.equivalence.int.test.ts) compares it with logId.
CREATE FUNCTION agent_runtime.log_id(command_id uuid, n integer) RETURNS uuid LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT (substr(c, 1, 8) || '-' || substr(c, 9, 4) || '-' ||
          lpad(to_hex(32768 | ((n & 262143) >> 6)), 4, '0') || '-' || lpad(to_hex(128 | (n & 63)), 2, '0') ||
          substr(h, 19, 2) || '-' || substr(h, 21, 12))::uuid
    FROM (SELECT replace(command_id::text, '-', '') AS c,
                 encode(agent_runtime.sha1('\x9c1d7e4a3b2f4a6e8d5c7f0e1a2b3c4d'::bytea ||
                        convert_to(command_id::text, 'UTF8') || '\x00'::bytea || convert_to(n::text, 'UTF8')), 'hex') AS h) x
$$;

-- Down Migration
DROP FUNCTION agent_runtime.log_id(uuid, integer);
DROP FUNCTION agent_runtime.sha1(bytea);
