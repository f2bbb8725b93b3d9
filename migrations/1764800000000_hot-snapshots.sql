-- Up Migration
-- A snapshot rewrites every level of its location, and the day's daily row of each, in one statement.
-- A page at fillfactor 80 has room for the new versions of a quarter of its rows: the rest moved to
-- other pages, with a new entry in every index (bench B1 at 100 % changed, pg_walinspect: about 3,000
-- of 10,000 level updates and 7,600 of 10,000 daily-row updates were not HOT, 340 B of index WAL per
-- line). At 50 every row of a page can be rewritten in place; the next rewrite prunes the versions
-- the last one left (no transaction still sees them) and finds the room again. The tables take up to
-- twice the pages; their rows are small and read by index.
-- Applies to pages written from now on; a VACUUM FULL or an in-place replay (D26) rewrites the rest.
ALTER TABLE sot.inventory_levels SET (fillfactor = 50);
ALTER TABLE sot.inventory_daily_snapshots SET (fillfactor = 50);

-- Down Migration
ALTER TABLE sot.inventory_levels SET (fillfactor = 80);
ALTER TABLE sot.inventory_daily_snapshots SET (fillfactor = 80);
