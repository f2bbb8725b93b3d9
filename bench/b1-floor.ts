// B1.floor: the contract floor for an inventory.snapshot. After the projector's own claim and shop
// lock (runtimeStore.ts), ONE set-based statement writes exactly the rows the projector writes:
// levels with the D15b stamps (unchanged levels only stamped, by the same UPDATE as the rest),
// update logs with the same log_id / log_seq, daily rows when new or changed (D16, D16b), the
// audit-batch outbox row and stock events (D18), and the stored reply. D6a (a barcode repeated in
// one command is applied line by line) is done with window functions over the line order.
// Ids: log ids and stock-event ids are computed IN the statement (pgcrypto sha1, installed in the
// floor's database only, schema bench_floor), and only for the lines that need one, as the projector
// does in JS; the one audit-batch event id is passed in (eventId from @ingest/domain, like the projector).
import type { PoolClient } from '@ingest/db';
import { eventId, type InventorySnapshotCommand } from '@ingest/domain';
import type { TopicNames } from '@ingest/kafka';
import { claimCommand, lockShop, type CommandPosition } from '../services/projector/src/runtimeStore.ts';

/** The floor's database gets sha1 (pgcrypto) in its own schema; the projector's database is left as migrated. */
export async function installFloorHelpers(admin: PoolClient | { query: PoolClient['query'] }): Promise<void> {
  await admin.query('CREATE SCHEMA IF NOT EXISTS bench_floor');
  await admin.query('CREATE EXTENSION IF NOT EXISTS pgcrypto SCHEMA bench_floor');
  await admin.query('GRANT USAGE ON SCHEMA bench_floor TO ingest_service');
}

const LOG_NS_HEX = '9c1d7e4a3b2f4a6e8d5c7f0e1a2b3c4d'; // packages/domain/src/ids.ts LOG_NS
const EVENT_NS_HEX = 'e3a9f1c7-6d2b-4e8a-9b5f-1c7d3e9a2f6b'.replaceAll('-', ''); // EVENT_NS
const CE_SOURCE = '/retail-ingestion/projector'; // CLOUDEVENTS_SOURCE

/** sha1 of namespace || name, as hex (40 digits). */
const sha1Hex = (nsHex: string, nameBytes: string) => `encode(bench_floor.digest('\\x${nsHex}'::bytea || ${nameBytes}, 'sha1'), 'hex')`;
/** ids.ts logId: the command id's 48-bit time, version 8, n in 18 bits, then 56 bits of uuidv5(command_id, n). */
const logIdFrom = (h: string, n: string) =>
  `(substr(replace($3::text, '-', ''), 1, 8) || '-' || substr(replace($3::text, '-', ''), 9, 4) || '-' ||
    lpad(to_hex(32768 | ((${n} & 262143) >> 6)), 4, '0') || '-' || lpad(to_hex(128 | (${n} & 63)), 2, '0') ||
    substr(${h}, 19, 2) || '-' || substr(${h}, 21, 12))::uuid`;
/** RFC 9562 UUIDv5 from the sha1 hex: version nibble 5, variant bits 10. */
const uuidv5From = (h: string) =>
  `(substr(${h}, 1, 8) || '-' || substr(${h}, 9, 4) || '-5' || substr(${h}, 14, 3) || '-' ||
    substr('89ab', (position(substr(${h}, 17, 1) in '0123456789abcdef') - 1) % 4 + 1, 1) || substr(${h}, 18, 3) || '-' || substr(${h}, 21, 12))::uuid`;
const qtyObject = (p: string) =>
  `jsonb_build_object('on_hand_qty', ${p}1, 'available_qty', ${p}2, 'allocated_qty', ${p}3, 'reserved_qty', ${p}4, 'incoming_qty', ${p}5)`;
const same = (a: string, b: string) => [1, 2, 3, 4, 5].map((i) => `${a}${i} = ${b}${i}`).join(' AND ');
const differs = (a: string, b: string) => [1, 2, 3, 4, 5].map((i) => `${a}${i} <> ${b}${i}`).join(' OR ');
const QTY = ['on_hand_qty', 'available_qty', 'allocated_qty', 'reserved_qty', 'incoming_qty'];

/**
 * $1 shop, $2 location_id, $3 command_id, $4 received_at, $5 inventory_as_of (timestamptz), $6 the same
 * as sent (text, for event payloads), $7 source_system, $8 snapshot_date, $9..$14 barcode and the five
 * quantities per line (null = omitted), $15 kind, $16..$18 audit / stock-zero / stock-restored topics,
 * $19 idempotency_key, $20 the audit batch's event id.
 * The rows it reads are updated by their ctid (a TID scan of exactly those rows): the shop is locked
 * (lockShop), which the projector relies on too.
 */
export const FLOOR_SQL = `/* floor */
WITH input AS (
  SELECT u.ord::int AS ord, u.barcode, u.on_hand AS q1, coalesce(u.avail, u.on_hand) AS q2, coalesce(u.alloc, 0) AS q3,
         coalesce(u.resv, 0) AS q4, coalesce(u.inc, 0) AS q5
    FROM unnest($9::text[], $10::bigint[], $11::bigint[], $12::bigint[], $13::bigint[], $14::bigint[])
         WITH ORDINALITY AS u(barcode, on_hand, avail, alloc, resv, inc, ord)
), loc AS (
  SELECT location_id FROM locations WHERE shop = $1 AND location_id = $2::uuid
), prod AS (
  SELECT barcode, product_id FROM products WHERE shop = $1 AND barcode = ANY(ARRAY(SELECT barcode FROM input))
), stored AS (
  SELECT ctid AS s_ctid, product_id, on_hand_qty AS s1, available_qty AS s2, allocated_qty AS s3, reserved_qty AS s4, incoming_qty AS s5,
         stock_event_seq AS s_seq, last_absolute_as_of AS s_as_of, updated_at AS s_updated
    FROM inventory_levels
   WHERE shop = $1 AND product_id = ANY(ARRAY(SELECT product_id FROM prod)) AND location_id = (SELECT location_id FROM loc)
), stored_daily AS (
  -- one primary-key probe per product (a LATERAL with LIMIT stays a nested loop, whatever the daily table's statistics say)
  SELECT d.*
    FROM prod p CROSS JOIN LATERAL (
         SELECT x.ctid AS d_ctid, x.product_id, x.on_hand_qty AS d1, x.available_qty AS d2, x.allocated_qty AS d3, x.reserved_qty AS d4,
                x.incoming_qty AS d5, x.source AS d_source
           FROM inventory_daily_snapshots x
          WHERE x.shop = $1 AND x.product_id = p.product_id AND x.location_id = (SELECT location_id FROM loc) AND x.snapshot_date = $8::date
          LIMIT 1) d
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
         coalesce(${same('s.s', 's.q')}, false) AS same_as_stored, d.d_ctid,
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
         bool_or(changed) OVER wa AS any_changed, bool_or(daily_step) OVER wa AS any_daily, max(ord) OVER wa = ord AS is_last
    FROM restores r WINDOW wa AS (PARTITION BY product_id)
), decided AS (
  -- in line order: log_seq numbers the changed lines
  SELECT x.*, CASE WHEN changed THEN count(*) FILTER (WHERE changed) OVER (ORDER BY ord ROWS UNBOUNDED PRECEDING) - 1 END AS log_seq
    FROM per_product x
), level_update AS (
  -- narrow writes: a level whose quantities and seq end as stored keeps its updated_at and only gets the stamp
  UPDATE inventory_levels l
     SET on_hand_qty = f.q1, available_qty = f.q2, allocated_qty = f.q3, reserved_qty = f.q4, incoming_qty = f.q5,
         last_absolute_as_of = $5::timestamptz, stock_event_seq = f.seq_after,
         updated_at = CASE WHEN f.same_as_stored AND f.seq_after = f.s_seq THEN f.s_updated ELSE $4::timestamptz END,
         last_command_id = $3::uuid
    FROM decided f
   WHERE f.is_last AND f.had_level AND l.ctid = f.s_ctid AND l.ctid = ANY(ARRAY(SELECT s_ctid FROM decided WHERE is_last AND had_level))
), level_insert AS (
  INSERT INTO inventory_levels (shop, product_id, location_id, barcode, ${QTY.join(', ')}, last_absolute_as_of, stock_event_seq,
              created_at, updated_at, last_command_id)
  SELECT $1, f.product_id, (SELECT location_id FROM loc), f.barcode, f.q1, f.q2, f.q3, f.q4, f.q5, $5::timestamptz, f.seq_after,
         $4::timestamptz, $4::timestamptz, $3::uuid
    FROM decided f WHERE f.is_last AND NOT f.had_level
), daily_update AS (
  UPDATE inventory_daily_snapshots d
     SET barcode = f.barcode, on_hand_qty = f.q1, available_qty = f.q2, allocated_qty = f.q3, reserved_qty = f.q4, incoming_qty = f.q5,
         source = 'snapshot', inventory_as_of = $5::timestamptz, command_id = $3::uuid
    FROM decided f
   WHERE f.is_last AND f.any_daily AND d.ctid = f.d_ctid AND d.ctid = ANY(ARRAY(SELECT d_ctid FROM decided WHERE is_last AND any_daily AND d_ctid IS NOT NULL))
), daily_insert AS (
  INSERT INTO inventory_daily_snapshots (shop, product_id, location_id, snapshot_date, barcode, ${QTY.join(', ')}, source, inventory_as_of, command_id)
  SELECT $1, f.product_id, (SELECT location_id FROM loc), $8::date, f.barcode, f.q1, f.q2, f.q3, f.q4, f.q5, 'snapshot', $5::timestamptz, $3::uuid
    FROM decided f WHERE f.is_last AND f.any_daily AND f.d_ctid IS NULL
), log_insert AS (
  -- in log_seq order (decided is in line order), so the time-ordered log ids arrive in key order
  INSERT INTO inventory_update_logs (log_id, shop, product_id, location_id, barcode, change_type, change_source, before_data, after_data,
              changed_fields, idempotency_key, inventory_as_of, command_id, log_seq, created_at)
  SELECT ${logIdFrom('g.h', 'g.log_seq')}, $1, g.product_id, (SELECT location_id FROM loc), g.barcode, 'snapshot', $7,
         CASE WHEN g.has_before THEN ${qtyObject('g.b')} END, ${qtyObject('g.q')},
         CASE WHEN g.has_before
              THEN array_remove(ARRAY[${QTY.map((f, i) => `CASE WHEN g.b${i + 1} <> g.q${i + 1} THEN '${f}' END`).join(', ')}], NULL)
              ELSE ARRAY[${QTY.map((f) => `'${f}'`).join(', ')}] END,
         $19, $5::timestamptz, $3::uuid, g.log_seq, $4::timestamptz
    FROM (SELECT f.*, ${sha1Hex(LOG_NS_HEX, `convert_to($3::text, 'UTF8') || '\\x00'::bytea || convert_to(f.log_seq::text, 'UTF8')`)} AS h
            FROM decided f WHERE f.changed) g
), stock_events AS (
  SELECT e.ord, e.kind, ${uuidv5From('e.h')} AS event_id, e.product_id, e.barcode, e.b2, e.q1, e.q2, e.seq_after
    FROM (SELECT f.*, x.kind, ${sha1Hex(
      EVENT_NS_HEX,
      `convert_to($3::text, 'UTF8') || '\\x00'::bytea || convert_to(x.kind, 'UTF8') || '\\x00'::bytea ||
       convert_to(f.product_id::text || '|' || (SELECT location_id FROM loc)::text || '|' || f.seq_after, 'UTF8')`,
    )} AS h
            FROM decided f, LATERAL (SELECT CASE WHEN f.zero_ev THEN 'stock_zero' ELSE 'stock_restored' END AS kind) x
           WHERE f.zero_ev OR f.restore_ev) e
), outbox_insert AS (
  INSERT INTO agent_runtime.outbox (event_id, topic, message_key, headers, payload, command_id, log_table)
  SELECT event_id, topic, $1, headers, payload, $3::uuid, log_table FROM (
    SELECT 0 AS o, $20::uuid AS event_id, $16::text AS topic, '{}'::jsonb AS headers,
           jsonb_build_object('event_type', 'audit_batch', 'log_table', 'inventory_update_logs', 'command_id', $3::text) AS payload,
           'inventory_update_logs'::text AS log_table
     WHERE EXISTS (SELECT 1 FROM decided WHERE changed)
    UNION ALL
    SELECT e.ord, e.event_id, CASE WHEN e.kind = 'stock_zero' THEN $17::text ELSE $18::text END,
           jsonb_build_object('ce_specversion', '1.0', 'ce_id', e.event_id, 'ce_type', 'com.retail-ingestion.inventory.' || e.kind || '.v1',
                              'ce_source', '${CE_SOURCE}', 'ce_time', $6::text, 'ce_subject', e.product_id::text || '/' || (SELECT location_id FROM loc)::text,
                              'content-type', 'application/json'),
           jsonb_build_object('event_id', e.event_id, 'event_type', e.kind, 'schema_version', 1, 'shop', $1::text, 'product_id', e.product_id,
                              'barcode', e.barcode, 'location_id', (SELECT location_id FROM loc), 'previous_available_qty', e.b2,
                              'available_qty', e.q2, 'on_hand_qty', e.q1, 'change_type', 'snapshot', 'source_system', $7::text,
                              'occurred_at', $6::text, 'command_id', $3::text, 'seq', e.seq_after),
           NULL
      FROM stock_events e
  ) x ORDER BY o
  ON CONFLICT (event_id) DO NOTHING RETURNING 1
), counts AS (
  SELECT count(*) AS processed, count(*) FILTER (WHERE product_id IS NULL) AS unresolved, count(*) FILTER (WHERE stale) AS stale,
         count(*) FILTER (WHERE product_id IS NOT NULL AND NOT stale) AS upserted,
         coalesce(string_agg('{"barcode":' || to_json(barcode)::text || ',"reason":"product_not_found"}', ',' ORDER BY ord)
                    FILTER (WHERE product_id IS NULL), '') AS unresolved_json,
         coalesce(string_agg('{"barcode":' || to_json(barcode)::text || ',"location_id":"' || (SELECT location_id FROM loc)::text ||
                             '","stored_as_of":"' || to_char(s_as_of AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || '"}', ',' ORDER BY ord)
                    FILTER (WHERE stale), '') AS stale_json
    FROM lines
), logs_written AS (
  SELECT count(*) AS n FROM decided WHERE changed
), result AS (
  -- the reply as the projector stores it: JSON.stringify's text of decideSnapshot's body (a json column keeps it as sent)
  INSERT INTO agent_runtime.command_results (command_id, shop, kind, status_code, body)
  SELECT $3::uuid, $1, $15, 200,
         ('{"ok":true,"shop":' || to_json($1::text)::text || ',"location_id":"' || (SELECT location_id FROM loc)::text ||
          '","lines_processed":' || c.processed || ',"lines_upserted":' || c.upserted || ',"lines_unresolved":' || c.unresolved ||
          ',"logs_written":' || w.n || ',"lines_stale":' || c.stale || ',"unresolved":[' || c.unresolved_json ||
          '],"stale":[' || c.stale_json || ']}')::json
    FROM counts c, logs_written w
  ON CONFLICT (command_id) DO NOTHING RETURNING command_id
)
SELECT (SELECT location_id FROM loc)::text AS location_id, (SELECT n FROM logs_written)::int AS logs,
       (SELECT count(*) FROM outbox_insert)::int AS outbox,
       (SELECT count(*) FROM (SELECT pg_notify('outbox', '') WHERE EXISTS (SELECT 1 FROM outbox_insert)) n)::int AS notified_outbox,
       (SELECT count(*) FROM (SELECT pg_notify('command_results', command_id::text) FROM result) n)::int AS stored`;

export interface FloorOutcome {
  applied: boolean;
  logs: number;
  outbox: number;
}

/** FLOOR_SQL's parameters for a snapshot addressed by location_id (the client-side work the floor does). */
export function floorParams(c: InventorySnapshotCommand, topics: TopicNames): unknown[] {
  const loc = c.payload.location;
  if (!('location_id' in loc)) throw new Error('the floor covers snapshots addressed by location_id');
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
    loc.location_id,
    c.command_id,
    c.received_at,
    c.inventory_as_of,
    c.inventory_as_of,
    c.source_system,
    c.payload.snapshot_date,
    barcodes,
    ...q,
    c.kind,
    topics.audit,
    topics.stockZero,
    topics.stockRestored,
    c.idempotency_key ?? null,
    eventId(c.command_id, 'audit_batch', 'inventory_update_logs'),
  ];
}

/** The floor for one snapshot command in the caller's transaction: the projector's claim and shop lock, then FLOOR_SQL. */
export async function applyFloor(tx: PoolClient, c: InventorySnapshotCommand, at: CommandPosition, topics: TopicNames): Promise<FloorOutcome> {
  if (!(await claimCommand(tx, c, at))) return { applied: false, logs: 0, outbox: 0 };
  await lockShop(tx, c.shop);
  const { rows } = await tx.query<{ location_id: string | null; logs: number; outbox: number; stored: number }>(FLOOR_SQL, floorParams(c, topics));
  const r = rows[0]!;
  if (r.location_id === null) throw new Error(`the floor's location is not a location of ${c.shop}`);
  if (r.stored !== 1) throw new Error(`the floor stored no result for ${c.command_id}`);
  return { applied: true, logs: r.logs, outbox: r.outbox };
}
