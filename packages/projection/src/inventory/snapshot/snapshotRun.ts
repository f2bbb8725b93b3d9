import { querySized, type PoolClient } from '@ingest/db';
import { QTY_FIELDS, type InventorySnapshotCommand } from '@ingest/domain';
import type { Projection } from '../../projection.ts';
import { differs, moved, qtyObject, snapshotProjection, type SnapshotOutcome } from './snapshotSet.ts';

/**
 * Set-based projection of a run of inventory snapshots (endpoint 4) whose locations are resolved, in
 * log order (applyGroup hands it the snapshots of a group transaction that snapshotRuns.ts takes): ONE
 * statement resolves the barcodes, filters stale lines (D15b), applies the lines in order (D6a: a
 * repeated barcode sees the line before it; a later command sees what the earlier ones of the run
 * wrote), detects changes, and writes the levels (D15, narrow: unchanged levels only
 * get their stamp), the update logs with their log_id / log_seq (D3, agent_runtime.log_id), the day's
 * rows when new or changed (D16, D16b) and counts what happened, per command. Only the counts, the
 * unresolved and stale lines and the few stock events (D18) come back to Node, where the domain
 * builds each reply and its events (packages/domain/src/inventory/outcome.ts) as it does for
 * decideSnapshot.
 *
 * Commands one by one = lines in order: every line sets all five quantities of its level, so what a
 * line sees before it is the level's previous applied line in the run, else the stored level (window
 * functions over (product, location) in line order; the lines of a run are its commands' lines one
 * after the other, so line order is log order). The same holds for a day's row over (product,
 * location, date), for the D15b stamp (each applied line stamps its command's as-of, never older than
 * the stamp it passed), for D18's event seq, and for the levels' updated_at (the last command that
 * moved the level, D15 narrow writes). Each level and day's row is written once, from its last
 * line. Commands of several shops may share a run: a product id is derived from its shop (D3), so
 * (product, location) never mixes shops. snapshotRun.equivalence.int.test.ts and applyGroup.int.test.ts hold
 * the statement to the deciders one command at a time.
 *
 * Stored levels, daily rows and products are read by the bound barcode array $8, as in snapshotSet.ts
 * (whose comment says why).
 *
 * Why a run and not only one statement per command: measured on 16-command groups of snapshots on
 * stored levels (docs/benchmarks.md, "A run of snapshots in one statement"), one statement for the
 * run costs 23 % less than a statement per command at 50 lines a command and 15 % less at 200, and
 * about as much at 500 and 10-18 % MORE at 1,000: the rows themselves then cost most, and sorts and hash tables of 16,000
 * wide rows fall out of the CPU caches. So a run takes commands of up to RUN_COMMAND_MAX_LINES lines
 * (snapshotRuns.ts); larger ones keep the one-command statement.
 *
 * The levels it reads are updated by ctid: the shops are locked (lockShop) for the transaction.
 * Per command (arrays in run order): $1 shop, $2 location_id, $3 command_id, $4 received_at,
 * $5 inventory_as_of, $6 source_system, $7 snapshot_date, $14 idempotency_key, $15 actor (D28).
 * Per line (arrays in line order): $8 barcodes, $9..$13 the five quantities (null: omitted), $16 the
 * line's command (1-based index into the command arrays).
 */
const QTY = QTY_FIELDS.join(', ');

const RUN_CTES = `WITH input AS (
  -- a line's command's values by subscript, not by a join: the planner keeps the count of lines
  -- (joined to a set of commands it estimated a few rows, and planned a probe per line)
  SELECT u.ord::int AS ord, u.c, u.barcode, u.on_hand AS q1, coalesce(u.avail, u.on_hand) AS q2, coalesce(u.alloc, 0) AS q3,
         coalesce(u.resv, 0) AS q4, coalesce(u.inc, 0) AS q5, ($1::text[])[u.c] AS shop, ($2::uuid[])[u.c] AS location_id,
         ($3::uuid[])[u.c] AS command_id, ($4::timestamptz[])[u.c] AS received_at, ($5::timestamptz[])[u.c] AS as_of,
         ($7::date[])[u.c] AS snapshot_date
    FROM unnest($16::int[], $8::text[], $9::bigint[], $10::bigint[], $11::bigint[], $12::bigint[], $13::bigint[])
         WITH ORDINALITY AS u(c, barcode, on_hand, avail, alloc, resv, inc, ord)
), prod AS (
  SELECT shop, barcode, product_id FROM products WHERE shop = ANY($1::text[]) AND barcode = ANY($8::text[])
), stored AS (
  SELECT ctid AS s_ctid, product_id, location_id, on_hand_qty AS s1, available_qty AS s2, allocated_qty AS s3, reserved_qty AS s4,
         incoming_qty AS s5, stock_event_seq AS s_seq, last_absolute_as_of AS s_as_of, updated_at AS s_updated
    FROM inventory_levels
   WHERE shop = ANY($1::text[]) AND location_id = ANY($2::uuid[]) AND barcode = ANY($8::text[])
), stored_daily AS (
  SELECT ctid AS d_ctid, product_id, location_id, snapshot_date AS d_date, on_hand_qty AS d1, available_qty AS d2, allocated_qty AS d3,
         reserved_qty AS d4, incoming_qty AS d5, source AS d_source
    FROM inventory_daily_snapshots
   WHERE shop = ANY($1::text[]) AND location_id = ANY($2::uuid[]) AND snapshot_date = ANY($7::date[]) AND barcode = ANY($8::text[])
), resolved AS (
  -- every line, with its product (null: unresolved), stored level and stored row of its day
  SELECT i.*, p.product_id, s.s_ctid, s.s1, s.s2, s.s3, s.s4, s.s5, s.s_seq, s.s_as_of, s.s_updated,
         d.d_ctid, d.d1, d.d2, d.d3, d.d4, d.d5, d.d_source
    FROM input i LEFT JOIN prod p ON p.shop = i.shop AND p.barcode = i.barcode
         LEFT JOIN stored s ON s.product_id = p.product_id AND s.location_id = i.location_id
         LEFT JOIN stored_daily d ON d.product_id = p.product_id AND d.location_id = i.location_id AND d.d_date = i.snapshot_date
), lines AS (
  -- D15b: a line older than its level's last absolute write is stale; that write is the stored one or
  -- an earlier line's (each applied line stamps its command's as-of; a stale line's is older, so
  -- counting it moves nothing)
  SELECT r.*, r.product_id IS NOT NULL AND coalesce(r.as_of < greatest(r.s_as_of, max(r.as_of) OVER w), false) AS stale,
         greatest(r.s_as_of, max(r.as_of) OVER w) AS last_as_of
    FROM resolved r WINDOW w AS (PARTITION BY r.product_id, r.location_id ORDER BY r.ord ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)
), steps AS (
  -- From here on every window runs over ONE order of the applied lines: (product, location, then
  -- day, command, line). It is line order within each level: snapshotRunFrom takes only commands
  -- whose days follow their as-of times, and the applied lines of a level have non-decreasing as-of
  -- times (D15b), so their days do not go back. Its prefixes are the other partitions: a day's row,
  -- a command's lines of it (one window each, evaluated together).
  -- D6a: each applied line sees the previous applied line of its level, or the stored level
  SELECT l.*, row_number() OVER w AS k, lag(snapshot_date) OVER w = snapshot_date AS same_day,
         lag(q1) OVER w AS p1, lag(q2) OVER w AS p2, lag(q3) OVER w AS p3, lag(q4) OVER w AS p4, lag(q5) OVER w AS p5
    FROM lines l WHERE NOT l.stale AND l.product_id IS NOT NULL
  WINDOW w AS (PARTITION BY product_id, location_id ORDER BY snapshot_date, c, ord)
), befores AS (
  SELECT s.ord, s.c, s.barcode, s.product_id, s.location_id, s.snapshot_date, s.command_id, s.received_at, s.as_of, s.shop,
         s.q1, s.q2, s.q3, s.q4, s.q5, s.s_ctid, s.s_seq, s.s_updated, s.d_ctid,
         s.s_ctid IS NOT NULL AS had_level, (k > 1 OR s.s_ctid IS NOT NULL) AS has_before,
         CASE WHEN k > 1 THEN p1 ELSE s1 END AS b1, CASE WHEN k > 1 THEN p2 ELSE s2 END AS b2, CASE WHEN k > 1 THEN p3 ELSE s3 END AS b3,
         CASE WHEN k > 1 THEN p4 ELSE s4 END AS b4, CASE WHEN k > 1 THEN p5 ELSE s5 END AS b5,
         -- D16b: the day's first line compares with the stored daily row, a later one with the line before it
         CASE WHEN same_day THEN ${differs('p', 'q')}
              ELSE s.d_ctid IS NULL OR s.d_source <> 'snapshot' OR ${differs('s.d', 'q')} END AS daily_step
    FROM steps s
), flags AS (
  SELECT b.*, (NOT has_before OR ${differs('b', 'q')}) AS changed, (has_before AND b2 > 0 AND q2 = 0) AS zero_ev
    FROM befores b
), restores AS (
  -- D18: back above 0 only after a stock event (stored seq > 0, or a stock_zero earlier in the run)
  SELECT f.*, (has_before AND b2 = 0 AND q2 > 0 AND (coalesce(s_seq, 0) > 0 OR coalesce(sum(zero_ev::int) OVER wp, 0) > 0)) AS restore_ev
    FROM flags f
  WINDOW wp AS (PARTITION BY product_id, location_id ORDER BY snapshot_date, c, ord ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)
), per_level AS (
  SELECT r.*,
         coalesce(s_seq, 0) + sum((zero_ev OR restore_ev)::int) OVER (PARTITION BY product_id, location_id ORDER BY snapshot_date, c, ord
                                                                     ROWS UNBOUNDED PRECEDING) AS seq_after,
         -- D15 narrow writes, per command as the decider decides them: a command moved a level when
         -- the level after its last line (quantities, event seq) is not the level before its first
         (${moved('wc')}) AS moved,
         -- a command writes its day's row from its last line of the day when one of them stepped (D16b)
         bool_or(daily_step) OVER wc AND last_value(ord) OVER wc = ord AS day_write
    FROM restores r
  WINDOW wc AS (PARTITION BY product_id, location_id, snapshot_date, c ORDER BY ord ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)
), decided AS (
  -- each level is written from its last line, with the last command that moved it as its updated_at;
  -- each day's row from its last write
  SELECT x.*, max(ord) OVER wa = ord AS is_last, min(c) OVER wa AS first_c, max(c) FILTER (WHERE moved) OVER wa AS changed_c,
         coalesce(day_write AND ord = max(ord) FILTER (WHERE day_write) OVER (PARTITION BY product_id, location_id, snapshot_date), false) AS daily_last
    FROM per_level x WINDOW wa AS (PARTITION BY product_id, location_id)
), level_update AS (
  -- narrow writes: a level no line changed keeps its updated_at and only gets the stamp (the decider's rule)
  UPDATE inventory_levels l
     SET on_hand_qty = f.q1, available_qty = f.q2, allocated_qty = f.q3, reserved_qty = f.q4, incoming_qty = f.q5,
         last_absolute_as_of = f.as_of, stock_event_seq = f.seq_after, updated_at = coalesce(($4::timestamptz[])[f.changed_c], f.s_updated),
         last_command_id = f.command_id
    FROM decided f
   WHERE f.is_last AND f.had_level AND l.ctid = f.s_ctid AND l.ctid = ANY(ARRAY(SELECT s_ctid FROM decided WHERE is_last AND had_level))
), level_insert AS (
  INSERT INTO inventory_levels (shop, product_id, location_id, barcode, ${QTY}, last_absolute_as_of, stock_event_seq,
              created_at, updated_at, last_command_id)
  SELECT f.shop, f.product_id, f.location_id, f.barcode, f.q1, f.q2, f.q3, f.q4, f.q5, f.as_of, f.seq_after,
         ($4::timestamptz[])[f.first_c], ($4::timestamptz[])[f.changed_c], f.command_id
    FROM decided f
   WHERE f.is_last AND NOT f.had_level
), daily_update AS (
  UPDATE inventory_daily_snapshots d
     SET barcode = f.barcode, on_hand_qty = f.q1, available_qty = f.q2, allocated_qty = f.q3, reserved_qty = f.q4, incoming_qty = f.q5,
         source = 'snapshot', inventory_as_of = f.as_of, command_id = f.command_id
    FROM decided f
   WHERE f.daily_last AND d.ctid = f.d_ctid AND d.ctid = ANY(ARRAY(SELECT d_ctid FROM decided WHERE daily_last AND d_ctid IS NOT NULL))
), daily_insert AS (
  INSERT INTO inventory_daily_snapshots (shop, product_id, location_id, snapshot_date, barcode, ${QTY}, source, inventory_as_of, command_id)
  SELECT f.shop, f.product_id, f.location_id, f.snapshot_date, f.barcode, f.q1, f.q2, f.q3, f.q4, f.q5, 'snapshot', f.as_of, f.command_id
    FROM decided f WHERE f.daily_last AND f.d_ctid IS NULL
), log_insert AS (
  -- log_seq numbers each command's changed lines in line order; inserted in that order, so the
  -- time-ordered log keys arrive in key order (a command's lines are contiguous: (c, ord) is line order)
  INSERT INTO inventory_update_logs (log_id, shop, product_id, location_id, barcode, change_type, change_source, before_data, after_data,
              changed_fields, idempotency_key, inventory_as_of, command_id, log_seq, created_at, actor)
  SELECT agent_runtime.log_id(g.command_id, g.log_seq), g.shop, g.product_id, g.location_id, g.barcode, 'snapshot', ($6::text[])[g.c],
         CASE WHEN g.has_before THEN ${qtyObject('g.b')} END, ${qtyObject('g.q')},
         CASE WHEN g.has_before
              THEN array_remove(ARRAY[${QTY_FIELDS.map((f, i) => `CASE WHEN g.b${i + 1} <> g.q${i + 1} THEN '${f}' END`).join(', ')}], NULL)
              ELSE ARRAY[${QTY_FIELDS.map((f) => `'${f}'`).join(', ')}] END,
         ($14::text[])[g.c], g.as_of, g.command_id, g.log_seq, g.received_at, ($15::text[])[g.c]
    FROM (SELECT d.*, (row_number() OVER (PARTITION BY d.c ORDER BY d.ord) - 1)::int AS log_seq FROM decided d WHERE d.changed) g
   ORDER BY g.c, g.ord
)`;

export const SNAPSHOT_RUN_SQL = `/* snapshot run, set-based */
${RUN_CTES}, applied AS (
  SELECT c, count(*) AS upserted, count(*) FILTER (WHERE changed) AS logs,
         jsonb_agg(jsonb_build_array(CASE WHEN zero_ev THEN 'stock_zero' ELSE 'stock_restored' END, product_id, barcode, b2, q2, q1, seq_after)
                   ORDER BY ord) FILTER (WHERE zero_ev OR restore_ev) AS events
    FROM decided GROUP BY c
), passed AS (
  SELECT c, array_agg(barcode ORDER BY ord) FILTER (WHERE product_id IS NULL) AS unresolved,
         array_agg(barcode ORDER BY ord) FILTER (WHERE stale) AS stale_barcodes,
         array_agg(last_as_of ORDER BY ord) FILTER (WHERE stale) AS stale_as_of
    FROM lines GROUP BY c
)
SELECT coalesce(a.upserted, 0)::int AS upserted, coalesce(a.logs, 0)::int AS logs, coalesce(p.unresolved, '{}') AS unresolved,
       coalesce(p.stale_barcodes, '{}') AS stale_barcodes, coalesce(p.stale_as_of, '{}') AS stale_as_of, coalesce(a.events, '[]') AS events
  FROM generate_series(1, cardinality($3::uuid[])) AS m(c) LEFT JOIN applied a ON a.c = m.c LEFT JOIN passed p ON p.c = m.c
 ORDER BY m.c`;

/** A snapshot of a run, with its resolved location. */
export interface SnapshotItem {
  c: InventorySnapshotCommand;
  locationId: string;
}

/** The statement's parameters: columns of the commands and of their lines, not a JSON document (no per-line objects to build). */
export function snapshotRunParams(items: readonly SnapshotItem[]): unknown[] {
  const n = items.reduce((sum, { c }) => sum + c.payload.lines.length, 0);
  const command = new Array<number>(n);
  const barcodes = new Array<string>(n);
  const q: Array<Array<number | null>> = Array.from({ length: 5 }, () => new Array<number | null>(n));
  let at = 0;
  for (const [k, { c }] of items.entries()) {
    for (const l of c.payload.lines) {
      command[at] = k + 1;
      barcodes[at] = l.barcode;
      q[0]![at] = l.on_hand_qty;
      q[1]![at] = l.available_qty ?? null;
      q[2]![at] = l.allocated_qty ?? null;
      q[3]![at] = l.reserved_qty ?? null;
      q[4]![at] = l.incoming_qty ?? null;
      at++;
    }
  }
  const each = <T>(f: (item: SnapshotItem) => T): T[] => items.map(f);
  return [
    each(({ c }) => c.shop),
    each(({ locationId }) => locationId),
    each(({ c }) => c.command_id),
    each(({ c }) => c.received_at),
    each(({ c }) => c.inventory_as_of),
    each(({ c }) => c.source_system),
    each(({ c }) => c.payload.snapshot_date),
    barcodes,
    ...q,
    each(({ c }) => c.idempotency_key ?? null),
    each(({ c }) => c.actor),
    command,
  ];
}

/** Endpoint 4 for a run of snapshots with resolved locations, in one statement; each reply and its events as decideSnapshot builds them. */
export async function projectSnapshotRun(tx: PoolClient, items: readonly SnapshotItem[]): Promise<Projection[]> {
  const lines = items.reduce((sum, { c }) => sum + c.payload.lines.length, 0);
  const { rows } = await querySized<SnapshotOutcome>(tx, SNAPSHOT_RUN_SQL, snapshotRunParams(items), lines);
  return items.map(({ c, locationId }, k) => snapshotProjection(c, locationId, rows[k]!));
}
