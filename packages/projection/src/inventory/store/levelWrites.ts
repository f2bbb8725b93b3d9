import { querySized, type PoolClient } from '@ingest/db';
import {
  QTY_FIELDS,
  QTY_MAX,
  stockEvent,
  type InventoryAvailableCommand,
  type InventoryChangeType,
  type InventoryLevelsCommand,
  type OutboxEvent,
  type QtyField,
  type StockEventKind,
} from '@ingest/domain';

/**
 * The set-based level write of endpoint 3 (levels/levelsSet.ts) and endpoint 5
 * (available/availableSet.ts): an available write is a levels write of one location that gives only
 * available_qty. Its lines name distinct (barcode, location) pairs, whose locations are resolved in
 * Node beforehand. ONE statement resolves the barcodes, computes the five quantities of each line
 * (absolute: the given fields over the stored ones; delta: stored plus delta, each clamped to
 * 0..QTY_MAX and reported per field), filters stale absolute lines (D15b), detects changes and
 * writes the levels (a missing level is created from zeros; unchanged ones only get their D15b
 * stamp), the update logs (D3, agent_runtime.log_id) and counts. Only the counts, the lines'
 * outcomes and the few stock events (D18) come back; their shapes are built by the domain
 * (packages/domain/src/inventory/outcome.ts), as in the deciders.
 *
 * $1 shop, $2 command_id, $3 received_at, $4 inventory_as_of, $5 source_system, $6 barcodes,
 * $7 location ids per line (null: unresolved, not applied), $8..$12 the five values per line (null:
 * omitted), $13 delta mode, $14 idempotency_key, $15 change type, $16 actor (D28).
 */
const qtyObject = (p: string): string => `jsonb_build_object(${QTY_FIELDS.map((f, i) => `'${f}', ${p}${i + 1}`).join(', ')})`;
const I = [1, 2, 3, 4, 5];

export const LEVELS_SQL = `/* levels, set-based */
WITH input AS (
  SELECT u.ord::int AS ord, u.barcode, u.location_id, u.v1, u.v2, u.v3, u.v4, u.v5
    FROM unnest($6::text[], $7::uuid[], $8::bigint[], $9::bigint[], $10::bigint[], $11::bigint[], $12::bigint[])
         WITH ORDINALITY AS u(barcode, location_id, v1, v2, v3, v4, v5, ord)
), prod AS (
  SELECT barcode, product_id FROM products WHERE shop = $1 AND barcode = ANY($6::text[])
), keys AS (
  SELECT DISTINCT p.product_id, i.location_id FROM input i JOIN prod p ON p.barcode = i.barcode WHERE i.location_id IS NOT NULL
), stored AS (
  SELECT l.ctid AS s_ctid, l.product_id, l.location_id, l.on_hand_qty AS s1, l.available_qty AS s2, l.allocated_qty AS s3,
         l.reserved_qty AS s4, l.incoming_qty AS s5, l.stock_event_seq AS s_seq, l.last_absolute_as_of AS s_as_of, l.updated_at AS s_updated
    FROM inventory_levels l
   -- = ANY over the bound arrays, as the decider path loads them: an index scan, or at worst one pass
   -- over the table, never a scan per key (a join's nested loop would do that while the statistics
   -- say "empty"); bound arrays are constants the planner hashes, where an ARRAY(SELECT ...) of the
   -- keys was searched linearly for every row a scan read (snapshotSet.ts). A level carries its
   -- product's barcode (the product id is derived from it, D3); the join below keeps the keys' pairs.
   WHERE l.shop = $1 AND l.barcode = ANY($6::text[]) AND l.location_id = ANY($7::uuid[])
), lines AS (
  SELECT i.*, p.product_id, s.s_ctid, s.s1, s.s2, s.s3, s.s4, s.s5, s.s_seq, s.s_as_of, s.s_updated,
         (NOT $13::boolean AND coalesce($4::timestamptz < s.s_as_of, false)) AS stale,
         ${I.map((k) => `CASE WHEN i.v${k} IS NULL THEN coalesce(s.s${k}, 0) WHEN $13::boolean THEN coalesce(s.s${k}, 0) + i.v${k} ELSE i.v${k} END AS c${k}`).join(',\n         ')}
    FROM input i LEFT JOIN prod p ON p.barcode = i.barcode AND i.location_id IS NOT NULL
    LEFT JOIN stored s ON s.product_id = p.product_id AND s.location_id = i.location_id
), decided AS (
  SELECT l.*, l.s_ctid IS NOT NULL AS had_level,
         ${I.map((k) => `least(greatest(l.c${k}, 0), ${QTY_MAX}) AS q${k}`).join(', ')}
    FROM lines l WHERE l.product_id IS NOT NULL AND NOT l.stale
), flags AS (
  SELECT d.*, (NOT had_level OR ${I.map((k) => `s${k} <> q${k}`).join(' OR ')}) AS changed,
         (had_level AND s2 > 0 AND q2 = 0) AS zero_ev, (had_level AND s2 = 0 AND q2 > 0 AND s_seq > 0) AS restore_ev
    FROM decided d
), numbered AS (
  SELECT f.*, CASE WHEN changed THEN count(*) FILTER (WHERE changed) OVER (ORDER BY ord ROWS UNBOUNDED PRECEDING) - 1 END AS log_seq
    FROM flags f
), level_update AS (
  UPDATE inventory_levels l
     SET ${I.map((k) => `${QTY_FIELDS[k - 1]} = n.q${k}`).join(', ')},
         last_absolute_as_of = CASE WHEN $13::boolean THEN n.s_as_of ELSE $4::timestamptz END,
         stock_event_seq = n.s_seq + (n.zero_ev OR n.restore_ev)::int,
         updated_at = CASE WHEN n.changed THEN $3::timestamptz ELSE n.s_updated END,
         last_command_id = $2::uuid
    FROM numbered n
   WHERE n.had_level AND (n.changed OR NOT $13::boolean) AND l.ctid = n.s_ctid
     AND l.ctid = ANY(ARRAY(SELECT s_ctid FROM numbered WHERE had_level AND (changed OR NOT $13::boolean)))
), level_insert AS (
  INSERT INTO inventory_levels (shop, product_id, location_id, barcode, ${QTY_FIELDS.join(', ')}, last_absolute_as_of, stock_event_seq,
              created_at, updated_at, last_command_id)
  SELECT $1, n.product_id, n.location_id, n.barcode, n.q1, n.q2, n.q3, n.q4, n.q5,
         CASE WHEN $13::boolean THEN NULL ELSE $4::timestamptz END, 0, $3::timestamptz, $3::timestamptz, $2::uuid
    FROM numbered n WHERE NOT n.had_level
), log_insert AS (
  INSERT INTO inventory_update_logs (log_id, shop, product_id, location_id, barcode, change_type, change_source, before_data, after_data,
              changed_fields, idempotency_key, inventory_as_of, command_id, log_seq, created_at, actor)
  SELECT agent_runtime.log_id($2::uuid, n.log_seq::int), $1, n.product_id, n.location_id, n.barcode, $15, $5,
         CASE WHEN n.had_level THEN ${qtyObject('n.s')} END, ${qtyObject('n.q')},
         CASE WHEN n.had_level
              THEN array_remove(ARRAY[${I.map((k) => `CASE WHEN n.s${k} <> n.q${k} THEN '${QTY_FIELDS[k - 1]}' END`).join(', ')}], NULL)
              ELSE ARRAY[${QTY_FIELDS.map((f) => `'${f}'`).join(', ')}] END,
         $14, $4::timestamptz, $2::uuid, n.log_seq, $3::timestamptz, $16::text
    FROM numbered n WHERE n.changed ORDER BY n.ord
)
SELECT (SELECT count(*) FROM numbered WHERE changed)::int AS updated,
       (SELECT count(*) FROM numbered WHERE NOT changed)::int AS unchanged,
       (SELECT coalesce(array_agg(ord ORDER BY ord), '{}') FROM lines WHERE location_id IS NOT NULL AND product_id IS NULL) AS unresolved_ords,
       -- per clamped field, in line then field order: [ord, field index, computed, set]
       (SELECT coalesce(jsonb_agg(jsonb_build_array(d.ord, x.k, x.c, x.q) ORDER BY d.ord, x.k), '[]')
          FROM decided d CROSS JOIN LATERAL (VALUES ${I.map((k) => `(${k}, d.c${k}, d.q${k}, d.v${k})`).join(', ')}) AS x(k, c, q, v)
         WHERE $13::boolean AND x.v IS NOT NULL AND x.c <> x.q) AS clamped,
       (SELECT coalesce(array_agg(ord ORDER BY ord), '{}') FROM lines WHERE stale) AS stale_ords,
       (SELECT coalesce(array_agg(s_as_of ORDER BY ord), '{}') FROM lines WHERE stale) AS stale_as_of,
       (SELECT coalesce(jsonb_agg(jsonb_build_array(CASE WHEN zero_ev THEN 'stock_zero' ELSE 'stock_restored' END, ord, product_id, s2, q2, q1,
                                                    s_seq + 1) ORDER BY ord), '[]')
          FROM numbered WHERE zero_ev OR restore_ev) AS events`;

interface LevelsOutcome {
  updated: number;
  unchanged: number;
  unresolved_ords: number[];
  clamped: Array<[number, number, number, number]>;
  stale_ords: number[];
  stale_as_of: Date[];
  events: Array<[StockEventKind, number, string, number, number, number, number]>;
}

/** One line of a set-based level write: its location (null: unresolved, not applied) and the five values (null: omitted). */
export interface LevelWriteLine {
  barcode: string;
  location_id: string | null;
  values: Array<number | null>;
}

export interface LevelWrites {
  updated: number;
  unchanged: number;
  /** Line indexes (0-based) whose location resolved but whose barcode is not a product of the shop. */
  productMissing: Set<number>;
  clamped: Array<{ line: number; field: QtyField; computed: number; set: number }>;
  stale: Array<{ line: number; stored_as_of: string }>;
  /** The stock events (D18), built by the domain's stockEvent as the deciders' are, with the line that emitted each. */
  events: Array<{ line: number; kind: StockEventKind; event: OutboxEvent }>;
}

/** LEVELS_SQL's parameters: columns of the lines. */
export function levelWritesParams(
  c: InventoryLevelsCommand | InventoryAvailableCommand,
  lines: LevelWriteLine[],
  changeType: InventoryChangeType,
): unknown[] {
  return [
    c.shop,
    c.command_id,
    c.received_at,
    c.inventory_as_of,
    c.source_system,
    lines.map((l) => l.barcode),
    lines.map((l) => l.location_id),
    ...QTY_FIELDS.map((_, k) => lines.map((l) => l.values[k] ?? null)),
    c.payload.mode === 'delta',
    c.idempotency_key ?? null,
    changeType,
    c.actor,
  ];
}

/**
 * LEVELS_SQL for endpoint 3 and endpoint 5 alike (an available write is a levels write of one
 * location that gives only available_qty): the rows are written, and what the reply needs comes back.
 */
export async function writeLevels(
  tx: PoolClient,
  c: InventoryLevelsCommand | InventoryAvailableCommand,
  lines: LevelWriteLine[],
  changeType: InventoryChangeType,
): Promise<LevelWrites> {
  const params = levelWritesParams(c, lines, changeType);
  const { rows } = await querySized<LevelsOutcome>(tx, LEVELS_SQL, params, lines.length);
  const r = rows[0]!;
  return {
    updated: r.updated,
    unchanged: r.unchanged,
    productMissing: new Set(r.unresolved_ords.map((o) => o - 1)),
    clamped: r.clamped.map(([ord, k, computed, set]) => ({ line: ord - 1, field: QTY_FIELDS[k - 1]!, computed, set })),
    stale: r.stale_ords.map((ord, i) => ({ line: ord - 1, stored_as_of: r.stale_as_of[i]!.toISOString() })),
    events: r.events.map(([kind, ord, product_id, previous, available, onHand, seq]) => ({
      line: ord - 1,
      kind,
      event: stockEvent(c, kind, changeType, {
        product_id,
        location_id: lines[ord - 1]!.location_id!,
        barcode: lines[ord - 1]!.barcode,
        previous_available_qty: previous,
        available_qty: available,
        on_hand_qty: onHand,
        seq,
      }),
    })),
  };
}
