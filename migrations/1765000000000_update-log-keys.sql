-- Up Migration
-- The update logs' primary key becomes (command_id, log_seq, created_at), and the index on command_id
-- alone goes: the key serves every read of a command's records (the relay's audit expansion, ORDER BY
-- command_id, log_seq) as that index did.
--
-- Why: log_id is a hash (uuidv5 of command_id and log_seq, D3), so the old key (log_id, created_at)
-- put each insert on a random page of an index that grows with the log (the current month's
-- partition reaches gigabytes). Once the logs outgrow the buffer cache every insert reads and dirties
-- pages all over it, and after each checkpoint writes a full-page image of each: a soak saw the
-- blocks read from outside shared_buffers grow tenfold as the logs passed 128 MB. command_id is a
-- UUIDv7 (time-ordered, the gateway's), so the new key grows at its right edge like the time indexes.
-- It is as unique as log_id was: log_id is derived from (command_id, log_seq), and created_at is the
-- command's received_at. One index fewer per log row, too (docs/operations.md, "Update log partitions").
--
-- On a partitioned table, ADD PRIMARY KEY builds the key on every partition inside this migration's
-- transaction: on a large live database, run it in a maintenance window.

CREATE FUNCTION agent_runtime.rekey_update_log(qualified text, command_index text, by_command boolean) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog AS $$
DECLARE
  pkey text;
BEGIN
  SELECT conname INTO pkey FROM pg_constraint WHERE conrelid = qualified::regclass AND contype = 'p';
  EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', qualified, pkey);
  IF by_command THEN
    EXECUTE format('ALTER TABLE %s ADD PRIMARY KEY (command_id, log_seq, created_at)', qualified);
    EXECUTE format('DROP INDEX %s', command_index);
  ELSE
    EXECUTE format('ALTER TABLE %s ADD PRIMARY KEY (log_id, created_at)', qualified);
    EXECUTE format('CREATE INDEX %s ON %s (command_id)', split_part(command_index, '.', 2), qualified);
  END IF;
END
$$;
REVOKE EXECUTE ON FUNCTION agent_runtime.rekey_update_log(text, text, boolean) FROM PUBLIC;

SELECT agent_runtime.rekey_update_log('public.product_update_logs', 'public.product_update_logs_command_idx', true);
SELECT agent_runtime.rekey_update_log('sot.inventory_update_logs', 'sot.inventory_update_logs_command_idx', true);
SELECT agent_runtime.rekey_update_log('public.order_line_master_update_logs', 'public.order_line_master_update_logs_command_idx', true);

-- Down Migration
SELECT agent_runtime.rekey_update_log('public.product_update_logs', 'public.product_update_logs_command_idx', false);
SELECT agent_runtime.rekey_update_log('sot.inventory_update_logs', 'sot.inventory_update_logs_command_idx', false);
SELECT agent_runtime.rekey_update_log('public.order_line_master_update_logs', 'public.order_line_master_update_logs_command_idx', false);
DROP FUNCTION agent_runtime.rekey_update_log(text, text, boolean);
