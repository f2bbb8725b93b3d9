-- Up Migration
-- Room on each page for the new version of an updated row, so that upserts which change no indexed
-- column (quantities, amounts, timestamps) can be HOT updates: no new index entries, less WAL.
-- Applies to pages written from now on; a VACUUM FULL or an in-place replay (D26) rewrites the rest.
ALTER TABLE sot.inventory_levels SET (fillfactor = 80);
ALTER TABLE sot.inventory_daily_snapshots SET (fillfactor = 80);
ALTER TABLE public.order_line_master SET (fillfactor = 80);
ALTER TABLE public.products SET (fillfactor = 90);

-- Down Migration
ALTER TABLE sot.inventory_levels RESET (fillfactor);
ALTER TABLE sot.inventory_daily_snapshots RESET (fillfactor);
ALTER TABLE public.order_line_master RESET (fillfactor);
ALTER TABLE public.products RESET (fillfactor);
