// B1.floor: the contract floor for an inventory.snapshot. After the projector's own claim and shop
// lock (the ledger's processedCommands.claim and lockShop), ONE set-based statement writes exactly the rows the projector writes:
// levels with the D15b stamps (unchanged levels only stamped, by the same UPDATE as the rest),
// update logs with the same log_id / log_seq, daily rows when new or changed (D16, D16b), the
// audit-batch outbox row and stock events (D18), and the stored reply. D6a (a barcode repeated in
// one command is applied line by line) is done with window functions over the line order.
// Since the set-based projection, the floor IS the projector's statement (SNAPSHOT_CTES)
// extended with what the projector still does in other statements and in JavaScript: stock-event ids
// (sha1 in SQL) and payloads, the outbox rows and the stored reply. The one audit-batch event id is
// passed in (eventId from @ingest/domain, like the projector).
import { lockShop, processedCommands, type PoolClient } from '@ingest/db';
import { eventId, type InventorySnapshotCommand } from '@ingest/domain';
import type { TopicNames } from '@ingest/kafka';
import { SNAPSHOT_CTES, snapshotParams, type CommandPosition } from '@ingest/projection';

const EVENT_NS_HEX = 'e3a9f1c7-6d2b-4e8a-9b5f-1c7d3e9a2f6b'.replaceAll('-', ''); // packages/domain/src/ids.ts EVENT_NS
const CE_SOURCE = '/retail-ingestion/projector'; // CLOUDEVENTS_SOURCE

/** sha1 of namespace || name, as hex (40 digits), with the migration's agent_runtime.sha1 (pgcrypto). */
const sha1Hex = (nsHex: string, nameBytes: string) => `encode(agent_runtime.sha1('\\x${nsHex}'::bytea || ${nameBytes}), 'hex')`;
/** RFC 9562 UUIDv5 from the sha1 hex: version nibble 5, variant bits 10. */
const uuidv5From = (h: string) =>
  `(substr(${h}, 1, 8) || '-' || substr(${h}, 9, 4) || '-5' || substr(${h}, 14, 3) || '-' ||
    substr('89ab', (position(substr(${h}, 17, 1) in '0123456789abcdef') - 1) % 4 + 1, 1) || substr(${h}, 18, 3) || '-' || substr(${h}, 21, 12))::uuid`;

/**
 * The projector's own set-based statement (SNAPSHOT_CTES: levels, logs, daily rows), extended with
 * what the projector does in further statements and in JavaScript: the stock-event ids and payloads,
 * the outbox rows and the stored reply. Parameters: SNAPSHOT_SQL's $1..$15, then $16 kind,
 * $17..$19 audit / stock-zero / stock-restored topics, $20 the audit batch's event id, $21
 * inventory_as_of as sent (text, for event payloads).
 */
export const FLOOR_SQL = `/* floor */
${SNAPSHOT_CTES}, stock_events AS (
  SELECT e.ord, e.kind, ${uuidv5From('e.h')} AS event_id, e.product_id, e.barcode, e.b2, e.q1, e.q2, e.seq_after
    FROM (SELECT f.*, x.kind, ${sha1Hex(
      EVENT_NS_HEX,
      `convert_to($3::text, 'UTF8') || '\\x00'::bytea || convert_to(x.kind, 'UTF8') || '\\x00'::bytea ||
       convert_to(f.product_id::text || '|' || $2::text || '|' || f.seq_after, 'UTF8')`,
    )} AS h
            FROM decided f, LATERAL (SELECT CASE WHEN f.zero_ev THEN 'stock_zero' ELSE 'stock_restored' END AS kind) x
           WHERE f.zero_ev OR f.restore_ev) e
), outbox_insert AS (
  INSERT INTO agent_runtime.outbox (event_id, topic, message_key, headers, payload, command_id, log_table)
  SELECT event_id, topic, $1, headers, payload, $3::uuid, log_table FROM (
    SELECT 0 AS o, $20::uuid AS event_id, $17::text AS topic, '{}'::jsonb AS headers,
           jsonb_build_object('event_type', 'audit_batch', 'log_table', 'inventory_update_logs', 'command_id', $3::text) AS payload,
           'inventory_update_logs'::text AS log_table
     WHERE EXISTS (SELECT 1 FROM decided WHERE changed)
    UNION ALL
    SELECT e.ord, e.event_id, CASE WHEN e.kind = 'stock_zero' THEN $18::text ELSE $19::text END,
           jsonb_build_object('ce_specversion', '1.0', 'ce_id', e.event_id, 'ce_type', 'com.retail-ingestion.inventory.' || e.kind || '.v1',
                              'ce_source', '${CE_SOURCE}', 'ce_time', $21::text, 'ce_subject', e.product_id::text || '/' || $2::text,
                              'ce_actor', $15::text, 'content-type', 'application/json'),
           jsonb_build_object('event_id', e.event_id, 'event_type', e.kind, 'schema_version', 1, 'shop', $1::text, 'product_id', e.product_id,
                              'barcode', e.barcode, 'location_id', $2::uuid, 'previous_available_qty', e.b2,
                              'available_qty', e.q2, 'on_hand_qty', e.q1, 'change_type', 'snapshot', 'source_system', $6::text,
                              'occurred_at', $21::text, 'command_id', $3::text, 'seq', e.seq_after),
           NULL
      FROM stock_events e
  ) x ORDER BY o
  ON CONFLICT (event_id) DO NOTHING RETURNING 1
), counts AS (
  SELECT count(*) AS processed, count(*) FILTER (WHERE product_id IS NULL) AS unresolved, count(*) FILTER (WHERE stale) AS stale,
         count(*) FILTER (WHERE product_id IS NOT NULL AND NOT stale) AS upserted,
         coalesce(string_agg('{"barcode":' || to_json(barcode)::text || ',"reason":"product_not_found"}', ',' ORDER BY ord)
                    FILTER (WHERE product_id IS NULL), '') AS unresolved_json,
         coalesce(string_agg('{"barcode":' || to_json(barcode)::text || ',"location_id":"' || $2::text ||
                             '","stored_as_of":"' || to_char(s_as_of AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || '"}', ',' ORDER BY ord)
                    FILTER (WHERE stale), '') AS stale_json
    FROM lines
), logs_written AS (
  SELECT count(*) AS n FROM decided WHERE changed
), result AS (
  -- the reply as the projector stores it: JSON.stringify's text of decideSnapshot's body (a json column keeps it as sent)
  INSERT INTO agent_runtime.command_results (command_id, shop, kind, status_code, body)
  SELECT $3::uuid, $1, $16, 200,
         ('{"ok":true,"shop":' || to_json($1::text)::text || ',"location_id":"' || $2::text ||
          '","lines_processed":' || c.processed || ',"lines_upserted":' || c.upserted || ',"lines_unresolved":' || c.unresolved ||
          ',"logs_written":' || w.n || ',"lines_stale":' || c.stale || ',"unresolved":[' || c.unresolved_json ||
          '],"stale":[' || c.stale_json || ']}')::json
    FROM counts c, logs_written w
  ON CONFLICT (command_id) DO NOTHING RETURNING command_id
)
SELECT (SELECT location_id FROM locations WHERE shop = $1 AND location_id = $2::uuid)::text AS location_id,
       (SELECT n FROM logs_written)::int AS logs,
       (SELECT count(*) FROM outbox_insert)::int AS outbox,
       (SELECT count(*) FROM (SELECT pg_notify('outbox', '') WHERE EXISTS (SELECT 1 FROM outbox_insert)) n)::int AS notified_outbox,
       (SELECT count(*) FROM (SELECT pg_notify('command_results', command_id::text) FROM result) n)::int AS stored`;

export interface FloorOutcome {
  applied: boolean;
  logs: number;
  outbox: number;
}

/** FLOOR_SQL's parameters for a snapshot addressed by location_id: the projector's, then the floor's own. */
export function floorParams(c: InventorySnapshotCommand, topics: TopicNames): unknown[] {
  const loc = c.payload.location;
  if (!('location_id' in loc)) throw new Error('the floor covers snapshots addressed by location_id');
  return [
    ...snapshotParams(c, loc.location_id),
    c.kind,
    topics.audit,
    topics.stockZero,
    topics.stockRestored,
    eventId(c.command_id, 'audit_batch', 'inventory_update_logs'),
    c.inventory_as_of,
  ];
}

/** The floor for one snapshot command in the caller's transaction: the projector's claim and shop lock, then FLOOR_SQL. */
export async function applyFloor(
  tx: PoolClient,
  c: InventorySnapshotCommand,
  at: CommandPosition,
  topics: TopicNames,
): Promise<FloorOutcome> {
  if (!(await processedCommands.claim(tx, c, at))) return { applied: false, logs: 0, outbox: 0 };
  await lockShop(tx, c.shop);
  const { rows } = await tx.query<{ location_id: string | null; logs: number; outbox: number; stored: number }>(
    FLOOR_SQL,
    floorParams(c, topics),
  );
  const r = rows[0]!;
  if (r.location_id === null) throw new Error(`the floor's location is not a location of ${c.shop}`);
  if (r.stored !== 1) throw new Error(`the floor stored no result for ${c.command_id}`);
  return { applied: true, logs: r.logs, outbox: r.outbox };
}
