-- Up Migration
-- The whole data model (D24): four schemas, every table and read view, and the
-- least-privilege roles (D25). Projectors are the only writers (D1); ids are derived
-- by the deciders, never drawn by the database (D3), so no serial keys in the read model.

CREATE SCHEMA IF NOT EXISTS sot;
CREATE SCHEMA IF NOT EXISTS agent_runtime;
CREATE SCHEMA IF NOT EXISTS agent_read;

-- Product master -------------------------------------------------------------------------
CREATE TABLE public.products (
  product_id     uuid PRIMARY KEY,               -- uuidv5(ns, shop || '\0' || barcode) (D3)
  shop           text NOT NULL,
  barcode        text NOT NULL,
  product_name   text NOT NULL,
  sku            text,
  variant_name   text,
  brand          text,
  category_l1    text,
  category_l2    text,
  category_l3    text,
  current_price  numeric,
  current_cost   numeric,
  currency       text,
  is_active      boolean,
  created_at     timestamptz NOT NULL,          -- the creating command's received_at (D3)
  updated_at     timestamptz NOT NULL,
  last_command_id uuid NOT NULL,
  CONSTRAINT products_shop_barcode_key UNIQUE (shop, barcode)
);

CREATE TABLE public.product_update_logs (
  log_id         uuid PRIMARY KEY,
  shop           text NOT NULL,
  product_id     uuid NOT NULL,
  barcode        text NOT NULL,
  change_type    text NOT NULL CHECK (change_type IN ('created', 'price_change', 'name_change', 'attribute_change')),
  before_data    jsonb,
  after_data     jsonb NOT NULL,
  changed_fields text[] NOT NULL,
  change_source  text NOT NULL,
  command_id     uuid NOT NULL,
  log_seq        integer NOT NULL,              -- order of the record within its command
  created_at     timestamptz NOT NULL
);
CREATE INDEX product_update_logs_shop_barcode_idx ON public.product_update_logs (shop, barcode, created_at);
CREATE INDEX product_update_logs_command_idx ON public.product_update_logs (command_id);

-- Locations and channels registry (D14) ----------------------------------------------------
CREATE TABLE sot.locations (
  location_id    uuid PRIMARY KEY,
  shop           text NOT NULL,
  name           text NOT NULL,
  created_at     timestamptz NOT NULL,
  updated_at     timestamptz NOT NULL,
  last_command_id uuid NOT NULL
);
CREATE INDEX locations_shop_idx ON sot.locations (shop);

CREATE TABLE sot.location_identifiers (
  location_id      uuid NOT NULL REFERENCES sot.locations (location_id),
  shop             text NOT NULL,
  identifier_type  text NOT NULL,
  identifier_value text NOT NULL,
  PRIMARY KEY (location_id, identifier_type, identifier_value)
);
-- Not unique: several locations of a shop may share an identifier (-> location_ambiguous).
CREATE INDEX location_identifiers_lookup_idx ON sot.location_identifiers (shop, identifier_type, identifier_value);

CREATE TABLE sot.channels (
  channel_id     uuid PRIMARY KEY,
  shop           text NOT NULL,
  name           text NOT NULL,
  created_at     timestamptz NOT NULL,
  updated_at     timestamptz NOT NULL,
  last_command_id uuid NOT NULL
);
CREATE INDEX channels_shop_idx ON sot.channels (shop);

-- Inventory --------------------------------------------------------------------------------
CREATE TABLE sot.inventory_levels (
  shop               text NOT NULL,
  product_id         uuid NOT NULL,
  location_id        uuid NOT NULL,
  barcode            text NOT NULL,
  on_hand_qty        bigint NOT NULL DEFAULT 0 CHECK (on_hand_qty >= 0),
  available_qty      bigint NOT NULL DEFAULT 0 CHECK (available_qty >= 0),
  allocated_qty      bigint NOT NULL DEFAULT 0 CHECK (allocated_qty >= 0),
  reserved_qty       bigint NOT NULL DEFAULT 0 CHECK (reserved_qty >= 0),
  incoming_qty       bigint NOT NULL DEFAULT 0 CHECK (incoming_qty >= 0),
  last_absolute_as_of timestamptz,                 -- D15b: as-of of the last absolute write
  stock_event_seq    integer NOT NULL DEFAULT 0,   -- D18: per-level event sequence
  created_at         timestamptz NOT NULL,
  updated_at         timestamptz NOT NULL,
  last_command_id    uuid NOT NULL,
  PRIMARY KEY (shop, product_id, location_id)
);
CREATE INDEX inventory_levels_location_idx ON sot.inventory_levels (shop, location_id);

CREATE TABLE sot.inventory_daily_snapshots (
  shop            text NOT NULL,
  product_id      uuid NOT NULL,
  location_id     uuid NOT NULL,
  snapshot_date   date NOT NULL,                   -- business date (D16)
  barcode         text NOT NULL,
  on_hand_qty     bigint NOT NULL,
  available_qty   bigint NOT NULL,
  allocated_qty   bigint NOT NULL,
  reserved_qty    bigint NOT NULL,
  incoming_qty    bigint NOT NULL,
  source          text NOT NULL CHECK (source IN ('snapshot', 'daily_job')),
  inventory_as_of timestamptz NOT NULL,
  command_id      uuid NOT NULL,
  PRIMARY KEY (shop, product_id, location_id, snapshot_date)
);

CREATE TABLE sot.inventory_update_logs (
  log_id          uuid PRIMARY KEY,
  shop            text NOT NULL,
  product_id      uuid NOT NULL,
  location_id     uuid NOT NULL,
  barcode         text NOT NULL,
  change_type     text NOT NULL CHECK (change_type IN ('snapshot', 'available_set', 'available_delta', 'levels_set', 'levels_delta')),
  change_source   text NOT NULL,
  before_data     jsonb,
  after_data      jsonb NOT NULL,
  changed_fields  text[] NOT NULL,
  idempotency_key text,
  inventory_as_of timestamptz NOT NULL,
  command_id      uuid NOT NULL,
  log_seq         integer NOT NULL,             -- order of the record within its command
  created_at      timestamptz NOT NULL
);
CREATE INDEX inventory_update_logs_level_idx ON sot.inventory_update_logs (shop, product_id, location_id, created_at);
CREATE INDEX inventory_update_logs_command_idx ON sot.inventory_update_logs (command_id);

-- Order lines --------------------------------------------------------------------------------
CREATE TABLE public.order_line_master (
  order_line_id           uuid PRIMARY KEY,      -- uuidv5 of the unique key (D3)
  shop                    text NOT NULL,
  source_system           text NOT NULL,
  transaction_id          text NOT NULL,
  transaction_line_id     text NOT NULL,
  line_instance_no        integer NOT NULL CHECK (line_instance_no >= 1),
  barcode                 text NOT NULL,
  ordered_at              timestamptz NOT NULL,
  currency                text NOT NULL,
  is_test                 boolean NOT NULL,
  channel_id              uuid NOT NULL,
  location_id             uuid NOT NULL,
  customer_id             text,
  gross_amount_taxincl    numeric NOT NULL,
  discount_amount_taxincl numeric NOT NULL,
  net_amount_taxincl      numeric NOT NULL,
  net_amount_taxexcl      numeric NOT NULL,
  tax_amount              numeric NOT NULL,
  tax_rate                numeric NOT NULL CHECK (tax_rate >= 0 AND tax_rate <= 1),
  refund_amount           numeric NOT NULL CHECK (refund_amount >= 0),
  refunded_at             timestamptz,
  refund_reason           text,
  created_at              timestamptz NOT NULL,
  updated_at              timestamptz NOT NULL,
  last_command_id         uuid NOT NULL,
  CONSTRAINT order_line_master_key UNIQUE (shop, source_system, transaction_id, transaction_line_id, line_instance_no)
);
CREATE INDEX order_line_master_shop_barcode_idx ON public.order_line_master (shop, barcode);
CREATE INDEX order_line_master_ordered_at_idx ON public.order_line_master (shop, ordered_at);

CREATE TABLE public.order_line_master_update_logs (
  log_id              uuid PRIMARY KEY,
  shop                text NOT NULL,
  order_line_id       uuid NOT NULL,
  source_system       text NOT NULL,
  transaction_id      text NOT NULL,
  transaction_line_id text NOT NULL,
  line_instance_no    integer NOT NULL,
  change_type         text NOT NULL CHECK (change_type IN ('insert', 'update', 'refund')),
  before_data         jsonb,
  after_data          jsonb NOT NULL,
  changed_fields      text[] NOT NULL,
  change_source       text NOT NULL,
  ingest_run_id       text,
  idempotency_key     text,
  changed_by_user_id  uuid,
  command_id          uuid NOT NULL,
  log_seq             integer NOT NULL,         -- order of the record within its command
  created_at          timestamptz NOT NULL
);
CREATE INDEX order_line_master_update_logs_line_idx ON public.order_line_master_update_logs (order_line_id, created_at);
CREATE INDEX order_line_master_update_logs_command_idx ON public.order_line_master_update_logs (command_id);

-- Runtime: exactly-once bookkeeping, replies, outbox (D4, D5, D6, D19) ----------------------------
CREATE TABLE agent_runtime.processed_commands (
  command_id   uuid PRIMARY KEY,
  shop         text NOT NULL,
  kind         text NOT NULL,
  kafka_topic  text NOT NULL,
  kafka_partition integer NOT NULL,
  kafka_offset bigint NOT NULL,
  received_at  timestamptz NOT NULL,
  processed_at timestamptz NOT NULL DEFAULT now()
);

-- Written by the gateway once a command is appended, so any gateway instance can answer
-- GET /api/commands/{id} with "pending" and check the shop of a cron-secret caller (D6).
CREATE TABLE agent_runtime.command_requests (
  command_id  uuid PRIMARY KEY,
  shop        text NOT NULL,
  kind        text NOT NULL,
  received_at timestamptz NOT NULL
);

CREATE TABLE agent_runtime.command_results (
  command_id  uuid PRIMARY KEY,
  shop        text NOT NULL,
  kind        text NOT NULL,
  status_code integer NOT NULL,
  body        json NOT NULL,           -- json, not jsonb: the reply keeps its field order
  created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE agent_runtime.outbox (
  id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,  -- publish order only; not part of the read model
  event_id     uuid NOT NULL UNIQUE,                             -- deterministic (D3, D5)
  topic        text NOT NULL,
  message_key  text NOT NULL,
  headers      jsonb NOT NULL DEFAULT '{}'::jsonb,
  payload      jsonb NOT NULL,
  command_id   uuid NOT NULL,
  -- Set on an audit row: it stands for every record of this log table written by command_id, in
  -- log_seq order; the relay publishes one audit event per record (the records are immutable and
  -- were written in the same transaction), so a 10,000-line command adds one outbox row, not 10,000.
  log_table    text CHECK (log_table IN ('product_update_logs', 'inventory_update_logs', 'order_line_master_update_logs')),
  created_at   timestamptz NOT NULL DEFAULT now(),
  published_at timestamptz
);
CREATE INDEX outbox_unpublished_idx ON agent_runtime.outbox (id) WHERE published_at IS NULL;

CREATE TABLE agent_runtime.idempotency_keys (
  shop            text NOT NULL,
  idempotency_key text NOT NULL,
  command_id      uuid NOT NULL,
  payload_hash    text NOT NULL,
  created_at      timestamptz NOT NULL,
  PRIMARY KEY (shop, idempotency_key)
);

CREATE TABLE agent_runtime.projector_checkpoints (
  projector       text NOT NULL,
  kafka_topic     text NOT NULL,
  kafka_partition integer NOT NULL,
  next_offset     bigint NOT NULL,
  updated_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (projector, kafka_topic, kafka_partition)
);

CREATE TABLE agent_runtime.daily_snapshot_runs (
  shop          text NOT NULL,
  snapshot_date date NOT NULL,
  command_id    uuid NOT NULL,
  created_at    timestamptz NOT NULL,
  PRIMARY KEY (shop, snapshot_date)
);

-- Read views (D24): the spec's field names, with shop and barcode -------------------------------
CREATE VIEW agent_read.products AS
  SELECT product_id, shop, barcode, product_name, sku, variant_name, brand,
         category_l1, category_l2, category_l3, current_price, current_cost, currency, is_active,
         created_at, updated_at
    FROM public.products;

CREATE VIEW agent_read.product_update_logs AS
  SELECT log_id, shop, product_id, barcode, change_type, before_data, after_data, changed_fields,
         change_source, command_id, log_seq, created_at
    FROM public.product_update_logs;

CREATE VIEW agent_read.inventory_levels AS
  SELECT l.shop, l.product_id, l.location_id, l.barcode, p.product_name,
         l.on_hand_qty, l.available_qty, l.allocated_qty, l.reserved_qty, l.incoming_qty,
         l.last_absolute_as_of AS inventory_as_of, l.updated_at
    FROM sot.inventory_levels l
    LEFT JOIN public.products p ON p.product_id = l.product_id;

CREATE VIEW agent_read.inventory_daily_snapshots AS
  SELECT shop, product_id, location_id, snapshot_date, barcode, on_hand_qty, available_qty,
         allocated_qty, reserved_qty, incoming_qty, source, inventory_as_of
    FROM sot.inventory_daily_snapshots;

CREATE VIEW agent_read.inventory_update_logs AS
  SELECT log_id, shop, product_id, location_id, barcode, change_type, change_source, before_data,
         after_data, changed_fields, idempotency_key, inventory_as_of, command_id, log_seq, created_at
    FROM sot.inventory_update_logs;

CREATE VIEW agent_read.order_line_master AS
  SELECT o.order_line_id, o.shop, o.source_system, o.transaction_id, o.transaction_line_id,
         o.line_instance_no, o.barcode, p.product_name, p.sku, o.ordered_at, o.currency, o.is_test,
         o.channel_id, o.location_id, o.customer_id, o.gross_amount_taxincl, o.discount_amount_taxincl,
         o.net_amount_taxincl, o.net_amount_taxexcl, o.tax_amount, o.tax_rate, o.refund_amount,
         o.refunded_at, o.refund_reason, o.created_at, o.updated_at
    FROM public.order_line_master o
    LEFT JOIN public.products p ON p.shop = o.shop AND p.barcode = o.barcode;

CREATE VIEW agent_read.order_line_master_update_logs AS
  SELECT log_id, shop, order_line_id, source_system, transaction_id, transaction_line_id,
         line_instance_no, change_type, before_data, after_data, changed_fields, change_source,
         ingest_run_id, idempotency_key, changed_by_user_id, command_id, log_seq, created_at
    FROM public.order_line_master_update_logs;

-- Roles (D25). Roles are cluster-wide, so create them only once. -------------------------------
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'agent_reader') THEN
    CREATE ROLE agent_reader NOLOGIN;
  END IF;
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'ingest_service') THEN
    CREATE ROLE ingest_service NOLOGIN;
  END IF;
END
$$;

-- agent_reader: SELECT on agent_read and nothing else. The views run with their owner's
-- rights, so the reader needs no grant on the schemas behind them.
REVOKE ALL ON SCHEMA sot, agent_runtime FROM PUBLIC;
REVOKE CREATE ON SCHEMA public FROM PUBLIC;
REVOKE ALL ON ALL TABLES IN SCHEMA public FROM PUBLIC;
GRANT USAGE ON SCHEMA agent_read TO agent_reader;
GRANT SELECT ON ALL TABLES IN SCHEMA agent_read TO agent_reader;

-- ingest_service: reads and writes rows, owns nothing, so it cannot alter the schema.
GRANT USAGE ON SCHEMA sot, agent_runtime, agent_read, public TO ingest_service;
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA sot, agent_runtime, public TO ingest_service;
GRANT SELECT ON ALL TABLES IN SCHEMA agent_read TO ingest_service;
REVOKE ALL ON TABLE public.pgmigrations FROM ingest_service;
-- The migrating user may act as the service role (`options=-c role=ingest_service`).
DO $$
BEGIN
  EXECUTE format('GRANT ingest_service TO %I', current_user);
  EXECUTE format('GRANT agent_reader TO %I', current_user);
END
$$;

-- Down Migration
DROP SCHEMA agent_read CASCADE;
DROP SCHEMA agent_runtime CASCADE;
DROP SCHEMA sot CASCADE;
DROP TABLE public.order_line_master_update_logs, public.order_line_master,
           public.product_update_logs, public.products;
