-- Up Migration
-- agent_runtime.log_id (D3, the update logs' ids derived in PostgreSQL) as an expression the planner
-- inlines into the statement that calls it, with the same result for every (command_id, n).
--
-- Why: the first body converted its text with convert_to(), which is STABLE, so PostgreSQL could not
-- inline this IMMUTABLE function and ran it through the SQL-function executor once per log row:
-- 8 µs a row, 80 ms of a 10,000-line snapshot's ~730 ms statement. The text -> bytea cast gives the
-- same bytes here (a UUID's and an integer's text are ASCII, with no backslash) and is immutable; the
-- digest is read once (overlay puts the dash into its hex), and the command id's first 13 characters
-- are already "8 hex - 4 hex". Inlined it costs ~1.5 µs a row. The property test comparing it with the
-- domain's logId (packages/projection/src/inventory/equivalence/logId.equivalence.int.test.ts) holds.
CREATE OR REPLACE FUNCTION agent_runtime.log_id(command_id uuid, n integer) RETURNS uuid LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT (substr(command_id::text, 1, 13) || '-' || lpad(to_hex(32768 | ((n & 262143) >> 6)), 4, '0') || '-' ||
          lpad(to_hex(128 | (n & 63)), 2, '0') ||
          overlay(encode(substring(agent_runtime.sha1('\x9c1d7e4a3b2f4a6e8d5c7f0e1a2b3c4d'::bytea || command_id::text::bytea ||
                                                        '\x00'::bytea || n::text::bytea) from 10 for 7), 'hex')
                  placing '-' from 3 for 0))::uuid
$$;

-- Down Migration
CREATE OR REPLACE FUNCTION agent_runtime.log_id(command_id uuid, n integer) RETURNS uuid LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT (substr(c, 1, 8) || '-' || substr(c, 9, 4) || '-' ||
          lpad(to_hex(32768 | ((n & 262143) >> 6)), 4, '0') || '-' || lpad(to_hex(128 | (n & 63)), 2, '0') ||
          substr(h, 19, 2) || '-' || substr(h, 21, 12))::uuid
    FROM (SELECT replace(command_id::text, '-', '') AS c,
                 encode(agent_runtime.sha1('\x9c1d7e4a3b2f4a6e8d5c7f0e1a2b3c4d'::bytea ||
                        convert_to(command_id::text, 'UTF8') || '\x00'::bytea || convert_to(n::text, 'UTF8')), 'hex') AS h) x
$$;
