-- Up Migration
-- The three update logs are the audit history the spec keeps (they are never pruned like the runtime
-- tables), and they grow fastest: a 20-minute probe wrote 1.19 GB of inventory_update_logs (1.7 M
-- rows), ~85 GB a day at that rate. Partitioned by RANGE on created_at (the command's received_at,
-- D3), an operator can detach, export and drop a whole period without a DELETE of billions of rows
-- or the VACUUM after it, and each period's indexes stay its own size (docs/operations.md, "Update
-- log partitions").
--
-- One partition per calendar month in UTC (<table>_pYYYYMM), not per week: every read that names no
-- time (the relay's audit expansion by command_id, a barcode's history) probes each attached
-- partition's index, and the planner looks at each partition; twelve a year keep that small where
-- weeks would be 52. A month is also the unit retention rules are written in. At the probe's rate a
-- month is ~2.5 TB: that is the unit an operator archives (npm run partitions); a shorter period would
-- change monthStart / partitionName in packages/db/src/logPartitions.ts and this migration's loop.
-- UTC, not BUSINESS_TIMEZONE: the bounds are instants, the same whatever the session's TimeZone.
--
-- Keys: a partitioned table's primary key must hold the partition key, so it is (log_id, created_at).
-- That is no weaker than log_id alone: log_id is derived from (command_id, log_seq) (D3) and
-- created_at is that command's received_at, so one log_id always comes with one created_at. Nothing
-- reads or conflicts on log_id alone (the projection only inserts, the relay and the readers read
-- by command_id, shop, barcode, order line and time); the other indexes are the same as before, one
-- per partition under a partitioned index of the same name.
--
-- Existing rows are copied into their months' partitions (months from the oldest row to two after
-- the current one; the projector's upkeep creates the next ones). The default partition catches a
-- row of a month that has none (a replay of old commands, an upkeep that did not run), so no insert
-- ever fails for lack of a partition. The copy rewrites the tables once, in this migration's
-- transaction: on a large live database, run it in a maintenance window. The indexes are the old
-- table's, by their own definitions and names (pg_get_indexdef), built after the copy.
--
-- One function does it both ways (the down migration calls it with partitioned = false, then drops
-- it); only the migrating user runs it (EXECUTE revoked from PUBLIC, and it needs the tables' owner).

CREATE FUNCTION agent_runtime.relayout_update_log(schema_name text, table_name text, partitioned boolean) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog AS $$
DECLARE
  old_name text := table_name || '_relayout';
  first_month timestamp;
  last_month timestamp := date_trunc('month', now() AT TIME ZONE 'UTC') + interval '2 months';
  m timestamp;
  cols text;
  defs text[];
  def text;
BEGIN
  EXECUTE format('ALTER TABLE %I.%I RENAME TO %I', schema_name, table_name, old_name);
  -- Same columns in the same order (the relay's SELECT * and the views), defaults, NOT NULL and checks.
  EXECUTE format('CREATE TABLE %I.%I (LIKE %I.%I INCLUDING DEFAULTS INCLUDING CONSTRAINTS) %s', schema_name, table_name, schema_name,
                 old_name, CASE WHEN partitioned THEN 'PARTITION BY RANGE (created_at)' ELSE '' END);
  IF partitioned THEN
    EXECUTE format('SELECT date_trunc(''month'', min(created_at) AT TIME ZONE ''UTC'') FROM %I.%I', schema_name, old_name) INTO first_month;
    m := least(coalesce(first_month, last_month), date_trunc('month', now() AT TIME ZONE 'UTC'));
    WHILE m <= last_month LOOP
      EXECUTE format('CREATE TABLE %I.%I PARTITION OF %I.%I FOR VALUES FROM (%L) TO (%L)',
                     schema_name, table_name || '_p' || to_char(m, 'YYYYMM'), schema_name, table_name,
                     m::text || '+00', (m + interval '1 month')::text || '+00');
      m := m + interval '1 month';
    END LOOP;
    EXECUTE format('CREATE TABLE %I.%I PARTITION OF %I.%I DEFAULT', schema_name, table_name || '_default', schema_name, table_name);
  END IF;
  EXECUTE format('INSERT INTO %I.%I SELECT * FROM %I.%I', schema_name, table_name, schema_name, old_name);
  -- The agent_read view over the table, pointed at the new one with the same columns: CREATE OR
  -- REPLACE keeps the view's grants (D25) and its comments.
  SELECT string_agg(quote_ident(a.attname), ', ' ORDER BY a.attnum) INTO cols
    FROM pg_attribute a WHERE a.attrelid = format('agent_read.%I', table_name)::regclass AND a.attnum > 0 AND NOT a.attisdropped;
  EXECUTE format('CREATE OR REPLACE VIEW agent_read.%I AS SELECT %s FROM %I.%I', table_name, cols, schema_name, table_name);
  SELECT array_agg(pg_get_indexdef(i.indexrelid)) INTO defs
    FROM pg_index i WHERE i.indrelid = format('%I.%I', schema_name, old_name)::regclass AND NOT i.indisprimary;
  EXECUTE format('DROP TABLE %I.%I', schema_name, old_name);
  -- The key (with the partition key in it when partitioned, see above), then the other indexes.
  EXECUTE format('ALTER TABLE %I.%I ADD PRIMARY KEY (%s)', schema_name, table_name,
                 CASE WHEN partitioned THEN 'log_id, created_at' ELSE 'log_id' END);
  FOREACH def IN ARRAY defs LOOP
    EXECUTE regexp_replace(def, ' ON (ONLY )?' || format('%I.%I', schema_name, old_name) || ' ', format(' ON %I.%I ', schema_name, table_name));
  END LOOP;
  -- The service role writes through the parent (D25); partitions need no grant of their own.
  EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON %I.%I TO ingest_service', schema_name, table_name);
END
$$;
REVOKE EXECUTE ON FUNCTION agent_runtime.relayout_update_log(text, text, boolean) FROM PUBLIC;

SELECT agent_runtime.relayout_update_log('public', 'product_update_logs', true);
SELECT agent_runtime.relayout_update_log('sot', 'inventory_update_logs', true);
SELECT agent_runtime.relayout_update_log('public', 'order_line_master_update_logs', true);

-- Down Migration
-- Back to one table each with its rows, key log_id and the same indexes; archived partitions stay archived.
SELECT agent_runtime.relayout_update_log('public', 'product_update_logs', false);
SELECT agent_runtime.relayout_update_log('sot', 'inventory_update_logs', false);
SELECT agent_runtime.relayout_update_log('public', 'order_line_master_update_logs', false);
DROP FUNCTION agent_runtime.relayout_update_log(text, text, boolean);
