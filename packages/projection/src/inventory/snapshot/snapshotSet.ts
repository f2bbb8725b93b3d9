import { querySized, type PoolClient } from '@ingest/db';
import {
  inventoryEvents,
  productNotFound,
  QTY_FIELDS,
  snapshotReply,
  staleLine,
  stockEvent,
  type InventorySnapshotCommand,
  type StockEventKind,
} from '@ingest/domain';
import type { Projection } from '../../projection.ts';

/**
 * Set-based projection of an inventory snapshot (endpoint 4) whose location is resolved:
 * ONE statement resolves the barcodes, filters stale lines (D15b), applies repeated barcodes line by
 * line (D6a, window functions over the line order), detects changes, and writes the levels (D15,
 * narrow: unchanged levels only get their stamp), the update logs with their log_id / log_seq (D3,
 * agent_runtime.log_id), the day's rows when new or changed (D16, D16b) and counts what happened.
 * Only the counts, the unresolved and stale lines and the few stock events (D18) come back to
 * Node, where the domain builds the reply and the events (packages/domain/src/inventory/outcome.ts) as it does
 * for decideSnapshot.
 *
 * The stored levels and daily rows are read by barcode, the bound array $8 (a product's id is derived
 * from its shop and barcode, D3, and every row carries its product's barcode): the planner folds a
 * bound array into a constant and hashes it, so whichever index it picks the membership test is O(1)
 * a row. Read by product id, `= ANY(ARRAY(SELECT product_id FROM prod))` is an array computed at run
 * time that is searched linearly: on a plan that scans (a new business date or a new location the
 * statistics do not know yet estimates 1 row, so the planner scans the (shop, snapshot_date) index
 * and filters) it cost 10,000 x 5,000 comparisons for a 10,000-line snapshot, 143 of its 487 ms, and
 * a per-product probe planned on those statistics was quadratic too (11 s in the bench).
 *
 * The levels it reads are updated by ctid: the shop is locked (lockShop) for the transaction.
 * $1 shop, $2 location_id, $3 command_id, $4 received_at, $5 inventory_as_of, $6 source_system,
 * $7 snapshot_date, $8 barcodes, $9..$13 the five quantities per line (null: omitted), $14 idempotency_key,
 * $15 actor (D28).
 */
const QTY = QTY_FIELDS.join(', ');
export const differs = (a: string, b: string): string => [1, 2, 3, 4, 5].map((i) => `${a}${i} <> ${b}${i}`).join(' OR ');
export const qtyObject = (p: string): string => `jsonb_build_object(${QTY_FIELDS.map((f, i) => `'${f}', ${p}${i + 1}`).join(', ')})`;
/**
 * Whether a command moved a level (D15: otherwise the level keeps its updated_at and only gets the
 * stamp), over a window `w` of the command's applied lines of the level in line order, whole frame:
 * a new level, a stock event (the event seq moved), or quantities after the last line other than
 * before the first. Lines that move a level and move it back leave it unmoved, as the decider says.
 */
export const moved = (w: string): string =>
  `NOT first_value(has_before) OVER ${w} OR bool_or(zero_ev OR restore_ev) OVER ${w} OR ${[1, 2, 3, 4, 5]
    .map((i) => `first_value(b${i}) OVER ${w} <> last_value(q${i}) OVER ${w}`)
    .join(' OR ')}`;

/** The statement's CTEs, which the bench's contract floor (bench/b1-floor.ts) extends with its outbox and result writes. */
export const SNAPSHOT_CTES = `WITH input AS (
  SELECT u.ord::int AS ord, u.barcode, u.on_hand AS q1, coalesce(u.avail, u.on_hand) AS q2, coalesce(u.alloc, 0) AS q3,
         coalesce(u.resv, 0) AS q4, coalesce(u.inc, 0) AS q5
    FROM unnest($8::text[], $9::bigint[], $10::bigint[], $11::bigint[], $12::bigint[], $13::bigint[])
         WITH ORDINALITY AS u(barcode, on_hand, avail, alloc, resv, inc, ord)
), prod AS (
  SELECT barcode, product_id FROM products WHERE shop = $1 AND barcode = ANY($8::text[])
), stored AS (
  SELECT ctid AS s_ctid, product_id, on_hand_qty AS s1, available_qty AS s2, allocated_qty AS s3, reserved_qty AS s4, incoming_qty AS s5,
         stock_event_seq AS s_seq, last_absolute_as_of AS s_as_of, updated_at AS s_updated
    FROM inventory_levels
   WHERE shop = $1 AND location_id = $2::uuid AND barcode = ANY($8::text[])
), stored_daily AS (
  SELECT ctid AS d_ctid, product_id, on_hand_qty AS d1, available_qty AS d2, allocated_qty AS d3, reserved_qty AS d4,
         incoming_qty AS d5, source AS d_source
    FROM inventory_daily_snapshots
   WHERE shop = $1 AND location_id = $2::uuid AND snapshot_date = $7::date AND barcode = ANY($8::text[])
), lines AS (
  -- every line, with its product (null: unresolved) and stored level; D15b: older than the level's last absolute write is stale
  SELECT i.*, p.product_id, s.s_ctid, s.s1, s.s2, s.s3, s.s4, s.s5, s.s_seq, s.s_as_of, s.s_updated,
         coalesce($5::timestamptz < s.s_as_of, false) AS stale
    FROM input i LEFT JOIN prod p ON p.barcode = i.barcode LEFT JOIN stored s ON s.product_id = p.product_id
), steps AS (
  -- D6a: each applied line sees the previous line of its product, or the stored level
  SELECT l.*, row_number() OVER w AS k,
         lag(q1) OVER w AS p1, lag(q2) OVER w AS p2, lag(q3) OVER w AS p3, lag(q4) OVER w AS p4, lag(q5) OVER w AS p5
    FROM lines l WHERE l.product_id IS NOT NULL AND NOT l.stale
  WINDOW w AS (PARTITION BY product_id ORDER BY ord)
), befores AS (
  SELECT s.ord, s.barcode, s.product_id, s.q1, s.q2, s.q3, s.q4, s.q5, s.k, s.s_ctid, s.s_seq, s.s_updated,
         s.s_ctid IS NOT NULL AS had_level, (k > 1 OR s.s_ctid IS NOT NULL) AS has_before,
         CASE WHEN k > 1 THEN p1 ELSE s1 END AS b1, CASE WHEN k > 1 THEN p2 ELSE s2 END AS b2, CASE WHEN k > 1 THEN p3 ELSE s3 END AS b3,
         CASE WHEN k > 1 THEN p4 ELSE s4 END AS b4, CASE WHEN k > 1 THEN p5 ELSE s5 END AS b5,
         d.d_ctid,
         -- D16b: the first line compares with the stored daily row, a repeated line with the line before it
         CASE WHEN k > 1 THEN ${differs('p', 'q')}
              ELSE d.d_ctid IS NULL OR d.d_source <> 'snapshot' OR ${differs('d.d', 'q')} END AS daily_step
    FROM steps s LEFT JOIN stored_daily d ON d.product_id = s.product_id
), flags AS (
  SELECT b.*, (NOT has_before OR ${differs('b', 'q')}) AS changed, (has_before AND b2 > 0 AND q2 = 0) AS zero_ev
    FROM befores b
), restores AS (
  -- D18: back above 0 only after a stock event (stored seq > 0, or a stock_zero earlier in this command)
  SELECT f.*, (has_before AND b2 = 0 AND q2 > 0 AND (coalesce(s_seq, 0) > 0 OR coalesce(sum(zero_ev::int) OVER wp, 0) > 0)) AS restore_ev
    FROM flags f WINDOW wp AS (PARTITION BY product_id ORDER BY ord ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)
), per_product AS (
  SELECT r.*,
         coalesce(s_seq, 0) + sum((zero_ev OR restore_ev)::int) OVER (PARTITION BY product_id ORDER BY ord ROWS UNBOUNDED PRECEDING) AS seq_after,
         -- D15 narrow writes as the decider decides them: the command moved the level when the level
         -- after its last line (quantities, event seq) is not the level before its first line
         (${moved('wa')}) AS moved, bool_or(daily_step) OVER wa AS any_daily, last_value(ord) OVER wa = ord AS is_last
    FROM restores r WINDOW wa AS (PARTITION BY product_id ORDER BY ord ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)
), decided AS (
  -- in line order: log_seq numbers the changed lines
  SELECT x.*, CASE WHEN changed THEN count(*) FILTER (WHERE changed) OVER (ORDER BY ord ROWS UNBOUNDED PRECEDING) - 1 END AS log_seq
    FROM per_product x
), level_update AS (
  -- narrow writes: a level no line changed keeps its updated_at and only gets the stamp (the decider's rule)
  UPDATE inventory_levels l
     SET on_hand_qty = f.q1, available_qty = f.q2, allocated_qty = f.q3, reserved_qty = f.q4, incoming_qty = f.q5,
         last_absolute_as_of = $5::timestamptz, stock_event_seq = f.seq_after,
         updated_at = CASE WHEN f.moved THEN $4::timestamptz ELSE f.s_updated END,
         last_command_id = $3::uuid
    FROM decided f
   WHERE f.is_last AND f.had_level AND l.ctid = f.s_ctid AND l.ctid = ANY(ARRAY(SELECT s_ctid FROM decided WHERE is_last AND had_level))
), level_insert AS (
  INSERT INTO inventory_levels (shop, product_id, location_id, barcode, ${QTY}, last_absolute_as_of, stock_event_seq,
              created_at, updated_at, last_command_id)
  SELECT $1, f.product_id, $2::uuid, f.barcode, f.q1, f.q2, f.q3, f.q4, f.q5, $5::timestamptz, f.seq_after,
         $4::timestamptz, $4::timestamptz, $3::uuid
    FROM decided f WHERE f.is_last AND NOT f.had_level
), daily_update AS (
  UPDATE inventory_daily_snapshots d
     SET barcode = f.barcode, on_hand_qty = f.q1, available_qty = f.q2, allocated_qty = f.q3, reserved_qty = f.q4, incoming_qty = f.q5,
         source = 'snapshot', inventory_as_of = $5::timestamptz, command_id = $3::uuid
    FROM decided f
   WHERE f.is_last AND f.any_daily AND d.ctid = f.d_ctid AND d.ctid = ANY(ARRAY(SELECT d_ctid FROM decided WHERE is_last AND any_daily AND d_ctid IS NOT NULL))
), daily_insert AS (
  INSERT INTO inventory_daily_snapshots (shop, product_id, location_id, snapshot_date, barcode, ${QTY}, source, inventory_as_of, command_id)
  SELECT $1, f.product_id, $2::uuid, $7::date, f.barcode, f.q1, f.q2, f.q3, f.q4, f.q5, 'snapshot', $5::timestamptz, $3::uuid
    FROM decided f WHERE f.is_last AND f.any_daily AND f.d_ctid IS NULL
), log_insert AS (
  -- in log_seq order (decided is in line order), so the time-ordered log ids arrive in key order
  INSERT INTO inventory_update_logs (log_id, shop, product_id, location_id, barcode, change_type, change_source, before_data, after_data,
              changed_fields, idempotency_key, inventory_as_of, command_id, log_seq, created_at, actor)
  SELECT agent_runtime.log_id($3::uuid, g.log_seq::int), $1, g.product_id, $2::uuid, g.barcode, 'snapshot', $6,
         CASE WHEN g.has_before THEN ${qtyObject('g.b')} END, ${qtyObject('g.q')},
         CASE WHEN g.has_before
              THEN array_remove(ARRAY[${QTY_FIELDS.map((f, i) => `CASE WHEN g.b${i + 1} <> g.q${i + 1} THEN '${f}' END`).join(', ')}], NULL)
              ELSE ARRAY[${QTY_FIELDS.map((f) => `'${f}'`).join(', ')}] END,
         $14, $5::timestamptz, $3::uuid, g.log_seq, $4::timestamptz, $15::text
    FROM decided g WHERE g.changed ORDER BY g.ord
)`;

export const SNAPSHOT_SQL = `/* snapshot, set-based */
${SNAPSHOT_CTES}
SELECT (SELECT count(*) FROM decided)::int AS upserted,
       (SELECT count(*) FROM decided WHERE changed)::int AS logs,
       (SELECT coalesce(array_agg(barcode ORDER BY ord), '{}') FROM lines WHERE product_id IS NULL) AS unresolved,
       (SELECT coalesce(array_agg(barcode ORDER BY ord), '{}') FROM lines WHERE stale) AS stale_barcodes,
       (SELECT coalesce(array_agg(s_as_of ORDER BY ord), '{}') FROM lines WHERE stale) AS stale_as_of,
       (SELECT coalesce(jsonb_agg(jsonb_build_array(CASE WHEN zero_ev THEN 'stock_zero' ELSE 'stock_restored' END, product_id, barcode, b2, q2, q1, seq_after)
                                  ORDER BY ord), '[]')
          FROM decided WHERE zero_ev OR restore_ev) AS events`;

/** The statement's parameters: columns of the lines, not a JSON document (no per-line objects to build). */
export function snapshotParams(c: InventorySnapshotCommand, locationId: string): unknown[] {
  const lines = c.payload.lines;
  const n = lines.length;
  const barcodes = new Array<string>(n);
  const q: Array<Array<number | null>> = Array.from({ length: 5 }, () => new Array<number | null>(n));
  for (let i = 0; i < n; i++) {
    const l = lines[i]!;
    barcodes[i] = l.barcode;
    q[0]![i] = l.on_hand_qty;
    q[1]![i] = l.available_qty ?? null;
    q[2]![i] = l.allocated_qty ?? null;
    q[3]![i] = l.reserved_qty ?? null;
    q[4]![i] = l.incoming_qty ?? null;
  }
  return [
    c.shop,
    locationId,
    c.command_id,
    c.received_at,
    c.inventory_as_of,
    c.source_system,
    c.payload.snapshot_date,
    barcodes,
    ...q,
    c.idempotency_key ?? null,
    c.actor,
  ];
}

/** Endpoint 4 for a resolved location, set-based; the reply and events are built as decideSnapshot builds them. */
export async function projectSnapshotSet(tx: PoolClient, c: InventorySnapshotCommand, locationId: string): Promise<Projection> {
  const params = snapshotParams(c, locationId);
  const { rows } = await querySized<SnapshotOutcome>(tx, SNAPSHOT_SQL, params, c.payload.lines.length);
  return snapshotProjection(c, locationId, rows[0]!);
}

/** What the set-based statements count for a command (SNAPSHOT_SQL, and per command SNAPSHOT_RUN_SQL). */
export interface SnapshotOutcome {
  upserted: number;
  logs: number;
  unresolved: string[];
  stale_barcodes: string[];
  stale_as_of: Date[];
  events: Array<[StockEventKind, string, string, number, number, number, number]>;
}

/** A command's reply and events from what its statement counted, as decideSnapshot builds them. */
export function snapshotProjection(c: InventorySnapshotCommand, locationId: string, r: SnapshotOutcome): Projection {
  // bigint quantities come back as JSON numbers: they are within QTY_MAX (2^53 - 1), checked by the gateway.
  const stock = r.events.map(([kind, product_id, barcode, previous, available, onHand, seq]) =>
    stockEvent(c, kind, 'snapshot', {
      product_id,
      location_id: locationId,
      barcode,
      previous_available_qty: previous,
      available_qty: available,
      on_hand_qty: onHand,
      seq,
    }),
  );
  return {
    reply: snapshotReply(c, locationId, {
      upserted: r.upserted,
      logsWritten: r.logs,
      unresolved: r.unresolved.map((barcode) => productNotFound(barcode)),
      stale: r.stale_barcodes.map((barcode, i) => staleLine(barcode, locationId, r.stale_as_of[i]!.toISOString())),
    }),
    events: inventoryEvents(c, r.logs, stock),
  };
}
