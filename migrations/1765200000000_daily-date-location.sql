-- Up Migration
-- The daily rows' (shop, snapshot_date) index also holds location_id: a snapshot reads its location's
-- rows of the day by (shop, location_id, snapshot_date) and its barcodes (snapshot/snapshotSet.ts).
-- On a new business date the statistics know no row of it yet, so the planner estimates one row and
-- takes this index whatever the other conditions: with (shop, snapshot_date) alone that read every
-- location's rows of the day for each snapshot (a retailer with 200 stores: all of them); with the
-- location in the key it reads the one location's. The documented lookup "stock on business dates"
-- (shop, snapshot_date BETWEEN) is served by the same index, under the same name (docs/reading-data.md).
-- Daily rows are inserted once per product, location and day; same-day rewrites stay HOT. The index is
-- rebuilt inside this migration's transaction: on a large live database, run it in a maintenance window.
DROP INDEX sot.inventory_daily_snapshots_shop_date_idx;
CREATE INDEX inventory_daily_snapshots_shop_date_idx ON sot.inventory_daily_snapshots (shop, snapshot_date, location_id);

-- Down Migration
DROP INDEX sot.inventory_daily_snapshots_shop_date_idx;
CREATE INDEX inventory_daily_snapshots_shop_date_idx ON sot.inventory_daily_snapshots (shop, snapshot_date);
