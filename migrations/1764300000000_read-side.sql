-- Up Migration
-- The read side for agents: views for the locations and channels registry (D14, D24), a COMMENT
-- on every agent_read view and column, and the indexes the documented lookups need
-- (docs/reading-data.md). Conventions of the comments: quantities are counts of units; timestamptz
-- values are instants (stored in UTC, shown in the session's TimeZone); business dates are dates
-- in BUSINESS_TIMEZONE (default Asia/Tokyo, D16); money is in the row's currency.

-- Registry views (D14, D24) --------------------------------------------------------------------------
CREATE VIEW agent_read.locations AS
  SELECT l.location_id, l.shop, l.name,
         COALESCE((SELECT jsonb_agg(jsonb_build_object('identifier_type', i.identifier_type, 'identifier_value', i.identifier_value)
                                    ORDER BY i.identifier_type, i.identifier_value)
                     FROM sot.location_identifiers i
                    WHERE i.location_id = l.location_id), '[]'::jsonb) AS identifiers,
         l.created_at, l.updated_at
    FROM sot.locations l;

CREATE VIEW agent_read.location_identifiers AS
  SELECT location_id, shop, identifier_type, identifier_value
    FROM sot.location_identifiers;

CREATE VIEW agent_read.channels AS
  SELECT channel_id, shop, name, created_at, updated_at
    FROM sot.channels;

-- D25: readable by agent_reader (and the services), like the other views.
GRANT SELECT ON agent_read.locations, agent_read.location_identifiers, agent_read.channels TO agent_reader, ingest_service;

-- Indexes for the documented lookups ------------------------------------------------------------------
-- Each one leads with shop (every lookup is per shop) and follows the filter of the lookup. Existing
-- indexes already serve: products by barcode (products_shop_barcode_key), product history by barcode
-- (product_update_logs_shop_barcode_idx), levels of a location (inventory_levels_location_idx), order
-- lines by barcode and by ordered_at (order_line_master_shop_barcode_idx / _ordered_at_idx), a line's
-- history (order_line_master_update_logs_line_idx), identifiers (location_identifiers_lookup_idx).
-- IF NOT EXISTS: on a large live database, build them first with CREATE INDEX CONCURRENTLY under
-- these names, and the migration (one transaction) skips them.

-- A barcode's levels at every location. Written only when a level is created: barcode never
-- changes, so quantity updates stay HOT (1763800000000_hot-updates).
CREATE INDEX IF NOT EXISTS inventory_levels_shop_barcode_idx ON sot.inventory_levels (shop, barcode);

-- Stock on a business date or a range of dates, and a barcode's daily history. One entry per daily
-- row (a row per level per day); same-day rewrites change no indexed column (HOT).
CREATE INDEX IF NOT EXISTS inventory_daily_snapshots_shop_date_idx ON sot.inventory_daily_snapshots (shop, snapshot_date);
CREATE INDEX IF NOT EXISTS inventory_daily_snapshots_shop_barcode_idx ON sot.inventory_daily_snapshots (shop, barcode, snapshot_date);

-- A barcode's (or a level's) change history. It replaces the index by (shop, product_id, location_id,
-- created_at), which nothing reads (the projector reads logs by command_id only): product_id is
-- uuidv5(shop, barcode), so this one answers the same questions by the column readers filter on, and
-- the hottest append-only table keeps its index count.
CREATE INDEX IF NOT EXISTS inventory_update_logs_shop_barcode_idx ON sot.inventory_update_logs (shop, barcode, location_id, created_at);
DROP INDEX sot.inventory_update_logs_level_idx;

-- What changed in a time window, per log. created_at is the receiving time of the command, so
-- per shop it grows with the log: entries go to the right edge of the index.
CREATE INDEX IF NOT EXISTS inventory_update_logs_shop_created_idx ON sot.inventory_update_logs (shop, created_at);
CREATE INDEX IF NOT EXISTS product_update_logs_shop_created_idx ON public.product_update_logs (shop, created_at);
CREATE INDEX IF NOT EXISTS order_line_master_update_logs_shop_created_idx ON public.order_line_master_update_logs (shop, created_at);

-- Comments -------------------------------------------------------------------------------------------
COMMENT ON VIEW agent_read.products IS 'Product master (spec: Product; endpoints 1 and 2, D7, D10): one row per shop and barcode, current values.';
COMMENT ON COLUMN agent_read.products.product_id IS 'Internal product id, uuidv5 of shop and barcode (D3); the same for the same barcode in every table.';
COMMENT ON COLUMN agent_read.products.shop IS 'Shop domain.';
COMMENT ON COLUMN agent_read.products.barcode IS 'Product identifier (JAN/EAN/UPC), unique per shop; join key to inventory and order lines.';
COMMENT ON COLUMN agent_read.products.product_name IS 'Product name.';
COMMENT ON COLUMN agent_read.products.sku IS 'SKU code; NULL if never sent or cleared (D10).';
COMMENT ON COLUMN agent_read.products.variant_name IS 'Variant name (size, colour, ...); NULL if not sent.';
COMMENT ON COLUMN agent_read.products.brand IS 'Brand name; NULL if not sent.';
COMMENT ON COLUMN agent_read.products.category_l1 IS 'Top-level category; NULL if not sent.';
COMMENT ON COLUMN agent_read.products.category_l2 IS 'Mid-level category; NULL if not sent.';
COMMENT ON COLUMN agent_read.products.category_l3 IS 'Low-level category; NULL if not sent.';
COMMENT ON COLUMN agent_read.products.current_price IS 'Current selling price per unit, in currency, as sent (the spec does not say whether tax is included); NULL if not sent.';
COMMENT ON COLUMN agent_read.products.current_cost IS 'Cost per unit, in currency, as sent; NULL if not sent.';
COMMENT ON COLUMN agent_read.products.currency IS 'Currency code of current_price and current_cost; JPY when omitted on create (D10).';
COMMENT ON COLUMN agent_read.products.is_active IS 'Active flag; true when omitted on create (D10).';
COMMENT ON COLUMN agent_read.products.created_at IS 'When the service received the command that created the product (UTC timestamptz).';
COMMENT ON COLUMN agent_read.products.updated_at IS 'When the service received the last command that changed the product (UTC timestamptz).';

COMMENT ON VIEW agent_read.product_update_logs IS 'Product change log (spec: Product update log; D10): one immutable row per kind of change per product per request, written by endpoints 1 and 2.';
COMMENT ON COLUMN agent_read.product_update_logs.log_id IS 'Record id, derived from command_id and log_seq (D3).';
COMMENT ON COLUMN agent_read.product_update_logs.shop IS 'Shop domain.';
COMMENT ON COLUMN agent_read.product_update_logs.product_id IS 'Product id (agent_read.products.product_id).';
COMMENT ON COLUMN agent_read.product_update_logs.barcode IS 'Product barcode.';
COMMENT ON COLUMN agent_read.product_update_logs.change_type IS 'created, price_change (current_price or current_cost), name_change (product_name) or attribute_change (any other field, D10); one change of both price and name writes two records.';
COMMENT ON COLUMN agent_read.product_update_logs.before_data IS 'The product before the change (product_id, shop, barcode and every product field); NULL for created.';
COMMENT ON COLUMN agent_read.product_update_logs.after_data IS 'The product after the change, same keys as before_data.';
COMMENT ON COLUMN agent_read.product_update_logs.changed_fields IS 'Names of the fields of this change_type that changed (for created: the fields sent non-null).';
COMMENT ON COLUMN agent_read.product_update_logs.change_source IS 'Endpoint path that received the change: /api/products/bulk-upsert or /api/ingest/products.';
COMMENT ON COLUMN agent_read.product_update_logs.command_id IS 'Id of the request (command, UUIDv7) that wrote the record; GET /api/commands/{command_id} (D6).';
COMMENT ON COLUMN agent_read.product_update_logs.log_seq IS 'Position of the record within its command, from 0; orders records of the same created_at.';
COMMENT ON COLUMN agent_read.product_update_logs.created_at IS 'When the service received the request (UTC timestamptz).';

COMMENT ON VIEW agent_read.inventory_levels IS 'Current stock per product and location (spec: Inventory level; endpoints 3, 4, 5, D15-D17): one row per shop, product and location.';
COMMENT ON COLUMN agent_read.inventory_levels.shop IS 'Shop domain.';
COMMENT ON COLUMN agent_read.inventory_levels.product_id IS 'Product id (agent_read.products.product_id).';
COMMENT ON COLUMN agent_read.inventory_levels.location_id IS 'Location id (agent_read.locations.location_id).';
COMMENT ON COLUMN agent_read.inventory_levels.barcode IS 'Product barcode.';
COMMENT ON COLUMN agent_read.inventory_levels.product_name IS 'Current product name from the product master (D24).';
COMMENT ON COLUMN agent_read.inventory_levels.on_hand_qty IS 'Stock on hand, units, >= 0.';
COMMENT ON COLUMN agent_read.inventory_levels.available_qty IS 'Sellable stock, units, >= 0 (a delta below 0 is stored as 0, D17).';
COMMENT ON COLUMN agent_read.inventory_levels.allocated_qty IS 'Allocated stock, units, >= 0.';
COMMENT ON COLUMN agent_read.inventory_levels.reserved_qty IS 'Reserved stock, units, >= 0.';
COMMENT ON COLUMN agent_read.inventory_levels.incoming_qty IS 'Expected incoming stock, units, >= 0.';
COMMENT ON COLUMN agent_read.inventory_levels.inventory_as_of IS 'inventory_as_of of the last absolute write applied (snapshot, available or levels absolute), even one that changed nothing; older absolute writes are refused as stale (D15b). NULL if only deltas wrote the level. UTC timestamptz.';
COMMENT ON COLUMN agent_read.inventory_levels.updated_at IS 'When the service received the last command that changed a quantity (UTC timestamptz).';

COMMENT ON VIEW agent_read.inventory_daily_snapshots IS 'Daily stock history (spec: Inventory daily snapshot; D16, D16b): one row per shop, product, location and business date.';
COMMENT ON COLUMN agent_read.inventory_daily_snapshots.shop IS 'Shop domain.';
COMMENT ON COLUMN agent_read.inventory_daily_snapshots.product_id IS 'Product id (agent_read.products.product_id).';
COMMENT ON COLUMN agent_read.inventory_daily_snapshots.location_id IS 'Location id (agent_read.locations.location_id).';
COMMENT ON COLUMN agent_read.inventory_daily_snapshots.snapshot_date IS 'Business date in BUSINESS_TIMEZONE (default Asia/Tokyo): for source snapshot the date of inventory_as_of in that zone; for daily_job the date the copy was made for (the business day just ended, or the date given to POST /api/admin/daily-snapshot) (D16).';
COMMENT ON COLUMN agent_read.inventory_daily_snapshots.barcode IS 'Product barcode.';
COMMENT ON COLUMN agent_read.inventory_daily_snapshots.on_hand_qty IS 'Stock on hand, units.';
COMMENT ON COLUMN agent_read.inventory_daily_snapshots.available_qty IS 'Sellable stock, units.';
COMMENT ON COLUMN agent_read.inventory_daily_snapshots.allocated_qty IS 'Allocated stock, units.';
COMMENT ON COLUMN agent_read.inventory_daily_snapshots.reserved_qty IS 'Reserved stock, units.';
COMMENT ON COLUMN agent_read.inventory_daily_snapshots.incoming_qty IS 'Expected incoming stock, units.';
COMMENT ON COLUMN agent_read.inventory_daily_snapshots.source IS 'snapshot: written by POST /api/ingest/inventory-snapshot (last values of that day); daily_job: copied from the level by the daily job or POST /api/admin/daily-snapshot, never over a snapshot row (D16).';
COMMENT ON COLUMN agent_read.inventory_daily_snapshots.inventory_as_of IS 'snapshot: inventory_as_of of the snapshot that first set these values that day (D16b); daily_job: when the service received the copy command. UTC timestamptz.';

COMMENT ON VIEW agent_read.inventory_update_logs IS 'Stock change log (spec: Inventory update log; endpoints 3, 4, 5): one immutable row per level whose quantities a request changed.';
COMMENT ON COLUMN agent_read.inventory_update_logs.log_id IS 'Record id, derived from command_id and log_seq (D3).';
COMMENT ON COLUMN agent_read.inventory_update_logs.shop IS 'Shop domain.';
COMMENT ON COLUMN agent_read.inventory_update_logs.product_id IS 'Product id (agent_read.products.product_id).';
COMMENT ON COLUMN agent_read.inventory_update_logs.location_id IS 'Location id (agent_read.locations.location_id).';
COMMENT ON COLUMN agent_read.inventory_update_logs.barcode IS 'Product barcode.';
COMMENT ON COLUMN agent_read.inventory_update_logs.change_type IS 'snapshot (endpoint 4), available_set / available_delta (endpoint 5 absolute / delta), levels_set / levels_delta (endpoint 3 absolute / delta, D17).';
COMMENT ON COLUMN agent_read.inventory_update_logs.change_source IS 'The request''s source_system.';
COMMENT ON COLUMN agent_read.inventory_update_logs.before_data IS 'The five quantities before ({on_hand_qty, available_qty, allocated_qty, reserved_qty, incoming_qty}, units); NULL when the write created the level.';
COMMENT ON COLUMN agent_read.inventory_update_logs.after_data IS 'The five quantities after, units.';
COMMENT ON COLUMN agent_read.inventory_update_logs.changed_fields IS 'Names of the quantities that changed (all five when the level was created).';
COMMENT ON COLUMN agent_read.inventory_update_logs.idempotency_key IS 'The request''s idempotency_key, if sent (delta dedupe scope, D19).';
COMMENT ON COLUMN agent_read.inventory_update_logs.inventory_as_of IS 'The request''s inventory_as_of (the time the stock figures describe); defaults to when the service received it. UTC timestamptz.';
COMMENT ON COLUMN agent_read.inventory_update_logs.command_id IS 'Id of the request (command, UUIDv7) that wrote the record; GET /api/commands/{command_id} (D6).';
COMMENT ON COLUMN agent_read.inventory_update_logs.log_seq IS 'Position of the record within its command, from 0 (request line order).';
COMMENT ON COLUMN agent_read.inventory_update_logs.created_at IS 'When the service received the request (UTC timestamptz).';

COMMENT ON VIEW agent_read.order_line_master IS 'Order lines (spec: Order line; endpoint 6, D20-D22): one row per sold unit (no quantity column), unique by shop, source_system, transaction_id, transaction_line_id, line_instance_no. Amounts are per unit, in currency.';
COMMENT ON COLUMN agent_read.order_line_master.order_line_id IS 'Internal id, derived from shop and the unique key (D3).';
COMMENT ON COLUMN agent_read.order_line_master.shop IS 'Shop domain.';
COMMENT ON COLUMN agent_read.order_line_master.source_system IS 'Originating external system.';
COMMENT ON COLUMN agent_read.order_line_master.transaction_id IS 'Transaction (order) id in source_system.';
COMMENT ON COLUMN agent_read.order_line_master.transaction_line_id IS 'Transaction line id in source_system.';
COMMENT ON COLUMN agent_read.order_line_master.line_instance_no IS 'Number of the sold unit within the line, from 1 (a line of quantity N is N rows).';
COMMENT ON COLUMN agent_read.order_line_master.barcode IS 'Product barcode; may be absent from the product master (then product_name and sku are NULL).';
COMMENT ON COLUMN agent_read.order_line_master.product_name IS 'Current product name from the product master; NULL if the barcode is not in it (D24).';
COMMENT ON COLUMN agent_read.order_line_master.sku IS 'Current SKU from the product master; NULL if the barcode is not in it or has none (D24).';
COMMENT ON COLUMN agent_read.order_line_master.ordered_at IS 'Order time as sent (UTC timestamptz).';
COMMENT ON COLUMN agent_read.order_line_master.currency IS 'Currency code of every amount of the row.';
COMMENT ON COLUMN agent_read.order_line_master.is_test IS 'Test-order flag: true rows are not real sales.';
COMMENT ON COLUMN agent_read.order_line_master.channel_id IS 'Sales channel id (agent_read.channels.channel_id).';
COMMENT ON COLUMN agent_read.order_line_master.location_id IS 'Location id (agent_read.locations.location_id).';
COMMENT ON COLUMN agent_read.order_line_master.customer_id IS 'External customer identifier; NULL if not sent.';
COMMENT ON COLUMN agent_read.order_line_master.gross_amount_taxincl IS 'Gross amount of the unit before discount, tax included, in currency.';
COMMENT ON COLUMN agent_read.order_line_master.discount_amount_taxincl IS 'Discount, tax included, in currency.';
COMMENT ON COLUMN agent_read.order_line_master.net_amount_taxincl IS 'Net amount, tax included, in currency; = gross - discount within 0.01 (D20a).';
COMMENT ON COLUMN agent_read.order_line_master.net_amount_taxexcl IS 'Net amount, tax excluded, in currency; = net_amount_taxincl - tax_amount within 0.01 (D20a).';
COMMENT ON COLUMN agent_read.order_line_master.tax_amount IS 'Tax amount, in currency.';
COMMENT ON COLUMN agent_read.order_line_master.tax_rate IS 'Tax rate as a fraction, 0 to 1 (0.10 = 10 percent).';
COMMENT ON COLUMN agent_read.order_line_master.refund_amount IS 'Refunded amount, in currency, >= 0 (0 if none).';
COMMENT ON COLUMN agent_read.order_line_master.refunded_at IS 'Refund time as sent (UTC timestamptz); NULL if not refunded.';
COMMENT ON COLUMN agent_read.order_line_master.refund_reason IS 'Refund reason; NULL if not sent.';
COMMENT ON COLUMN agent_read.order_line_master.created_at IS 'When the service received the request that inserted the row (UTC timestamptz).';
COMMENT ON COLUMN agent_read.order_line_master.updated_at IS 'When the service received the last request that changed the row (UTC timestamptz).';

COMMENT ON VIEW agent_read.order_line_master_update_logs IS 'Order line change log (spec: Order line update log; D21): one immutable row per inserted or changed order line per request (identical resends write none).';
COMMENT ON COLUMN agent_read.order_line_master_update_logs.log_id IS 'Record id, derived from command_id and log_seq (D3).';
COMMENT ON COLUMN agent_read.order_line_master_update_logs.shop IS 'Shop domain.';
COMMENT ON COLUMN agent_read.order_line_master_update_logs.order_line_id IS 'The order line (agent_read.order_line_master.order_line_id).';
COMMENT ON COLUMN agent_read.order_line_master_update_logs.source_system IS 'Unique key of the line: originating system.';
COMMENT ON COLUMN agent_read.order_line_master_update_logs.transaction_id IS 'Unique key of the line: transaction id.';
COMMENT ON COLUMN agent_read.order_line_master_update_logs.transaction_line_id IS 'Unique key of the line: transaction line id.';
COMMENT ON COLUMN agent_read.order_line_master_update_logs.line_instance_no IS 'Unique key of the line: sold unit number, from 1.';
COMMENT ON COLUMN agent_read.order_line_master_update_logs.change_type IS 'insert (new key), refund (refund_amount raised or refunded_at set from NULL) or update (any other change) (D21).';
COMMENT ON COLUMN agent_read.order_line_master_update_logs.before_data IS 'The line before (order_line_id, shop, key and every order line field; amounts in its currency); NULL for insert.';
COMMENT ON COLUMN agent_read.order_line_master_update_logs.after_data IS 'The line after, same keys as before_data.';
COMMENT ON COLUMN agent_read.order_line_master_update_logs.changed_fields IS 'Names of the fields that changed (for insert: every key and field).';
COMMENT ON COLUMN agent_read.order_line_master_update_logs.change_source IS 'The request''s change_source (default external_app).';
COMMENT ON COLUMN agent_read.order_line_master_update_logs.ingest_run_id IS 'The request''s ingest_run_id; NULL if not sent.';
COMMENT ON COLUMN agent_read.order_line_master_update_logs.idempotency_key IS 'The request''s idempotency_key (audit only); NULL if not sent.';
COMMENT ON COLUMN agent_read.order_line_master_update_logs.changed_by_user_id IS 'The request''s changed_by_user_id; NULL if not sent.';
COMMENT ON COLUMN agent_read.order_line_master_update_logs.command_id IS 'Id of the request (command, UUIDv7) that wrote the record; GET /api/commands/{command_id} (D6).';
COMMENT ON COLUMN agent_read.order_line_master_update_logs.log_seq IS 'Position of the record within its command, from 0 (request row order).';
COMMENT ON COLUMN agent_read.order_line_master_update_logs.created_at IS 'When the service received the request (UTC timestamptz).';

COMMENT ON VIEW agent_read.locations IS 'Locations registry (D14; POST /api/admin/locations): one row per location of a shop, with its external identifiers.';
COMMENT ON COLUMN agent_read.locations.location_id IS 'Location id (UUID), as sent or chosen by the gateway at registration; the location_id of requests and rows.';
COMMENT ON COLUMN agent_read.locations.shop IS 'Shop domain.';
COMMENT ON COLUMN agent_read.locations.name IS 'Location name, as last registered.';
COMMENT ON COLUMN agent_read.locations.identifiers IS 'External identifiers, [{identifier_type, identifier_value}] sorted by type and value, [] if none; what the location reference form of requests matches (D14). One row each in agent_read.location_identifiers.';
COMMENT ON COLUMN agent_read.locations.created_at IS 'When the service received the first registration (UTC timestamptz).';
COMMENT ON COLUMN agent_read.locations.updated_at IS 'When the service received the last registration, which replaced name and identifiers (UTC timestamptz).';

COMMENT ON VIEW agent_read.location_identifiers IS 'External identifiers of locations (D14), one row each: to find a location by identifier. Several locations of a shop may share one (then a request naming it is location_ambiguous).';
COMMENT ON COLUMN agent_read.location_identifiers.location_id IS 'Location id (agent_read.locations.location_id).';
COMMENT ON COLUMN agent_read.location_identifiers.shop IS 'Shop domain.';
COMMENT ON COLUMN agent_read.location_identifiers.identifier_type IS 'Kind of external identifier (free text, e.g. pos_store_code).';
COMMENT ON COLUMN agent_read.location_identifiers.identifier_value IS 'The identifier''s value, matched exactly.';

COMMENT ON VIEW agent_read.channels IS 'Sales channels registry (D14; POST /api/admin/channels): one row per channel of a shop.';
COMMENT ON COLUMN agent_read.channels.channel_id IS 'Channel id (UUID), as sent or chosen by the gateway at registration; the channel_id of order lines.';
COMMENT ON COLUMN agent_read.channels.shop IS 'Shop domain.';
COMMENT ON COLUMN agent_read.channels.name IS 'Channel name, as last registered.';
COMMENT ON COLUMN agent_read.channels.created_at IS 'When the service received the first registration (UTC timestamptz).';
COMMENT ON COLUMN agent_read.channels.updated_at IS 'When the service received the last registration (UTC timestamptz).';

-- Down Migration
DROP VIEW agent_read.channels, agent_read.location_identifiers, agent_read.locations;
DROP INDEX public.order_line_master_update_logs_shop_created_idx;
DROP INDEX public.product_update_logs_shop_created_idx;
DROP INDEX sot.inventory_update_logs_shop_created_idx;
CREATE INDEX inventory_update_logs_level_idx ON sot.inventory_update_logs (shop, product_id, location_id, created_at);
DROP INDEX sot.inventory_update_logs_shop_barcode_idx;
DROP INDEX sot.inventory_daily_snapshots_shop_barcode_idx;
DROP INDEX sot.inventory_daily_snapshots_shop_date_idx;
DROP INDEX sot.inventory_levels_shop_barcode_idx;
-- The comments of the views that stay.
DO $$
DECLARE r record;
BEGIN
  FOR r IN SELECT c.oid::regclass::text AS view, a.attname, a.attnum
             FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
             JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
            WHERE n.nspname = 'agent_read' AND c.relkind = 'v' LOOP
    IF r.attnum = 1 THEN EXECUTE format('COMMENT ON VIEW %s IS NULL', r.view); END IF;
    EXECUTE format('COMMENT ON COLUMN %s.%I IS NULL', r.view, r.attname);
  END LOOP;
END
$$;
