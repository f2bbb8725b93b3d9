-- Up Migration
-- Who wrote what (D28): every update-log record carries the actor of the command that wrote it, the
-- id of the shop's API key or 'platform' for the shared secrets. A NOT NULL column with a constant
-- default is metadata only in PostgreSQL 11+ (no rewrite of the largest tables, the lock is brief),
-- and gives every record written before D28 'platform': what replaying its command writes, since a
-- command without actor is decoded as platform.

ALTER TABLE public.product_update_logs ADD COLUMN actor text NOT NULL DEFAULT 'platform';
ALTER TABLE sot.inventory_update_logs ADD COLUMN actor text NOT NULL DEFAULT 'platform';
ALTER TABLE public.order_line_master_update_logs ADD COLUMN actor text NOT NULL DEFAULT 'platform';

-- The views gain it as their last column: CREATE OR REPLACE VIEW may only append, and it keeps the
-- views' grants (D25) and comments.
CREATE OR REPLACE VIEW agent_read.product_update_logs AS
  SELECT log_id, shop, product_id, barcode, change_type, before_data, after_data, changed_fields,
         change_source, command_id, log_seq, created_at, actor
    FROM public.product_update_logs;

CREATE OR REPLACE VIEW agent_read.inventory_update_logs AS
  SELECT log_id, shop, product_id, location_id, barcode, change_type, change_source, before_data,
         after_data, changed_fields, idempotency_key, inventory_as_of, command_id, log_seq, created_at, actor
    FROM sot.inventory_update_logs;

CREATE OR REPLACE VIEW agent_read.order_line_master_update_logs AS
  SELECT log_id, shop, order_line_id, source_system, transaction_id, transaction_line_id,
         line_instance_no, change_type, before_data, after_data, changed_fields, change_source,
         ingest_run_id, idempotency_key, changed_by_user_id, command_id, log_seq, created_at, actor
    FROM public.order_line_master_update_logs;

COMMENT ON COLUMN agent_read.product_update_logs.actor IS 'Who sent the request that wrote the record (D28): the id of the shop''s API key (key_ and 16 hex digits, as GET /api/admin/keys lists it), or platform for the shared secrets; platform for every record written before per-shop keys.';
COMMENT ON COLUMN agent_read.inventory_update_logs.actor IS 'Who sent the request that wrote the record (D28): the id of the shop''s API key (key_ and 16 hex digits, as GET /api/admin/keys lists it), or platform for the shared secrets; platform for every record written before per-shop keys.';
COMMENT ON COLUMN agent_read.order_line_master_update_logs.actor IS 'Who sent the request that wrote the record (D28): the id of the shop''s API key (key_ and 16 hex digits, as GET /api/admin/keys lists it), or platform for the shared secrets; platform for every record written before per-shop keys.';

-- Down Migration
-- A view cannot lose a column in place: the three views are created again as before, with their
-- grants (D25) and the comments of the columns they keep.
CREATE TEMP TABLE actor_view_comments AS
  SELECT c.relname AS view, a.attname AS col, d.description
    FROM pg_description d
    JOIN pg_class c ON c.oid = d.objoid AND d.classoid = 'pg_class'::regclass
    JOIN pg_namespace n ON n.oid = c.relnamespace
    LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = d.objsubid
   WHERE n.nspname = 'agent_read'
     AND c.relname IN ('product_update_logs', 'inventory_update_logs', 'order_line_master_update_logs');

DROP VIEW agent_read.product_update_logs, agent_read.inventory_update_logs, agent_read.order_line_master_update_logs;

CREATE VIEW agent_read.product_update_logs AS
  SELECT log_id, shop, product_id, barcode, change_type, before_data, after_data, changed_fields,
         change_source, command_id, log_seq, created_at
    FROM public.product_update_logs;

CREATE VIEW agent_read.inventory_update_logs AS
  SELECT log_id, shop, product_id, location_id, barcode, change_type, change_source, before_data,
         after_data, changed_fields, idempotency_key, inventory_as_of, command_id, log_seq, created_at
    FROM sot.inventory_update_logs;

CREATE VIEW agent_read.order_line_master_update_logs AS
  SELECT log_id, shop, order_line_id, source_system, transaction_id, transaction_line_id,
         line_instance_no, change_type, before_data, after_data, changed_fields, change_source,
         ingest_run_id, idempotency_key, changed_by_user_id, command_id, log_seq, created_at
    FROM public.order_line_master_update_logs;

GRANT SELECT ON agent_read.product_update_logs, agent_read.inventory_update_logs, agent_read.order_line_master_update_logs
  TO agent_reader, ingest_service;

DO $$
DECLARE r record;
BEGIN
  FOR r IN SELECT * FROM actor_view_comments WHERE col IS DISTINCT FROM 'actor' LOOP
    IF r.col IS NULL THEN
      EXECUTE format('COMMENT ON VIEW agent_read.%I IS %L', r.view, r.description);
    ELSE
      EXECUTE format('COMMENT ON COLUMN agent_read.%I.%I IS %L', r.view, r.col, r.description);
    END IF;
  END LOOP;
END
$$;
DROP TABLE actor_view_comments;

ALTER TABLE public.order_line_master_update_logs DROP COLUMN actor;
ALTER TABLE sot.inventory_update_logs DROP COLUMN actor;
ALTER TABLE public.product_update_logs DROP COLUMN actor;
