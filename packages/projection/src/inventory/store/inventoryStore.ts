import type { PoolClient } from '@ingest/db';
import { dailyKey, isUuid, levelKey, locationRefKey, type DailyRow, type InventoryLog, type Level, type LocationRef } from '@ingest/domain';

const QTY_COLS = 'on_hand_qty bigint, available_qty bigint, allocated_qty bigint, reserved_qty bigint, incoming_qty bigint';

export async function loadProductIds(tx: PoolClient, shop: string, barcodes: string[]): Promise<Map<string, string>> {
  if (barcodes.length === 0) return new Map();
  const { rows } = await tx.query<{ barcode: string; product_id: string }>(
    'SELECT barcode, product_id FROM products WHERE shop = $1 AND barcode = ANY($2::text[])',
    [shop, barcodes],
  );
  return new Map(rows.map((r) => [r.barcode, r.product_id]));
}

/** The shop's location ids matching each ref (two statements at most, whatever the number of refs). */
export async function loadLocationMatches(tx: PoolClient, shop: string, refs: LocationRef[]): Promise<Map<string, string[]>> {
  return (await loadLocationMatchesOf(tx, new Map([[shop, refs]]))).get(shop) ?? new Map();
}

/**
 * loadLocationMatches of several shops at once, in the same two statements at most (a group
 * transaction loads its inventory commands' locations up front: applyGroup).
 */
export async function loadLocationMatchesOf(
  tx: PoolClient,
  refsByShop: ReadonlyMap<string, LocationRef[]>,
): Promise<Map<string, Map<string, string[]>>> {
  const out = new Map([...refsByShop.keys()].map((shop) => [shop, new Map<string, string[]>()]));
  const byId = [...refsByShop].flatMap(([shop, refs]) =>
    // A malformed id can never name a location: it stays unresolved, and never reaches a uuid cast.
    [...new Set(refs.flatMap((r) => ('location_id' in r && isUuid(r.location_id) ? [r.location_id] : [])))].map((id) => ({ shop, id })),
  );
  // Each external ref once: a group's commands name the same few locations thousands of times.
  const exts = [...refsByShop].flatMap(([shop, refs]) => [
    ...new Map(refs.flatMap((r) => ('location' in r ? [[locationRefKey(r), { shop, ...r.location }] as const] : []))).values(),
  ]);
  if (byId.length) {
    const { rows } = await tx.query<{ shop: string; location_id: string }>(
      `SELECT l.shop, l.location_id FROM locations l
         JOIN unnest($1::text[], $2::uuid[]) AS r(shop, id) ON l.shop = r.shop AND l.location_id = r.id`,
      [byId.map((r) => r.shop), byId.map((r) => r.id)],
    );
    const found = new Set(rows.map((r) => `${r.shop}\u0000${r.location_id}`));
    for (const { shop, id } of byId)
      if (found.has(`${shop}\u0000${id.toLowerCase()}`)) out.get(shop)?.set(locationRefKey({ location_id: id }), [id.toLowerCase()]);
  }
  if (exts.length) {
    const { rows } = await tx.query<{ shop: string; identifier_type: string; identifier_value: string; location_id: string }>(
      `SELECT i.shop, i.identifier_type, i.identifier_value, i.location_id
         FROM location_identifiers i
         JOIN unnest($1::text[], $2::text[], $3::text[]) AS r(shop, t, v) ON i.shop = r.shop AND i.identifier_type = r.t AND i.identifier_value = r.v`,
      [exts.map((e) => e.shop), exts.map((e) => e.identifier_type), exts.map((e) => e.identifier_value)],
    );
    for (const r of rows) {
      const matches = out.get(r.shop);
      const key = locationRefKey({ location: { identifier_type: r.identifier_type, identifier_value: r.identifier_value } });
      matches?.set(key, [...(matches.get(key) ?? []), r.location_id]);
    }
  }
  return out;
}

/** Current levels for the products x locations the command can touch (the shop is locked: lockShop). */
export async function loadLevels(tx: PoolClient, shop: string, productIds: string[], locationIds: string[]): Promise<Map<string, Level>> {
  if (productIds.length === 0 || locationIds.length === 0) return new Map();
  const { rows } = await tx.query<Level & { last_absolute_as_of: Date | null; created_at: Date; updated_at: Date }>(
    `SELECT shop, product_id, location_id, barcode, on_hand_qty, available_qty, allocated_qty, reserved_qty, incoming_qty,
            last_absolute_as_of, stock_event_seq, created_at, updated_at
       FROM inventory_levels
      WHERE shop = $1 AND product_id = ANY($2::uuid[]) AND location_id = ANY($3::uuid[])`,
    [shop, productIds, locationIds],
  );
  return new Map(
    rows.map((r) => [
      levelKey(r.product_id, r.location_id),
      {
        ...r,
        last_absolute_as_of: r.last_absolute_as_of?.toISOString() ?? null,
        created_at: r.created_at.toISOString(),
        updated_at: r.updated_at.toISOString(),
      },
    ]),
  );
}

/** D16b: the stored daily rows of one date for the products x locations a snapshot names; one statement. */
export async function loadDailyRows(
  tx: PoolClient,
  shop: string,
  snapshotDate: string,
  productIds: string[],
  locationIds: string[],
): Promise<Map<string, DailyRow>> {
  if (productIds.length === 0 || locationIds.length === 0) return new Map();
  const { rows } = await tx.query<DailyRow & { inventory_as_of: Date }>(
    `SELECT shop, product_id, location_id, snapshot_date::text AS snapshot_date, barcode, on_hand_qty, available_qty,
            allocated_qty, reserved_qty, incoming_qty, source, inventory_as_of, command_id
       FROM inventory_daily_snapshots
      WHERE shop = $1 AND snapshot_date = $2::date AND product_id = ANY($3::uuid[]) AND location_id = ANY($4::uuid[])`,
    [shop, snapshotDate, productIds, locationIds],
  );
  return new Map(
    rows.map((r) => [dailyKey(r.product_id, r.location_id, r.snapshot_date), { ...r, inventory_as_of: r.inventory_as_of.toISOString() }]),
  );
}

export async function upsertLevels(tx: PoolClient, levels: Level[], commandId: string): Promise<void> {
  if (levels.length === 0) return;
  await tx.query(
    `INSERT INTO inventory_levels
       (shop, product_id, location_id, barcode, on_hand_qty, available_qty, allocated_qty, reserved_qty, incoming_qty,
        last_absolute_as_of, stock_event_seq, created_at, updated_at, last_command_id)
     SELECT x.*, $2::uuid FROM jsonb_to_recordset($1::jsonb) AS x(shop text, product_id uuid, location_id uuid, barcode text,
            ${QTY_COLS}, last_absolute_as_of timestamptz, stock_event_seq integer, created_at timestamptz, updated_at timestamptz)
     ON CONFLICT (shop, product_id, location_id) DO UPDATE SET
       on_hand_qty = EXCLUDED.on_hand_qty, available_qty = EXCLUDED.available_qty, allocated_qty = EXCLUDED.allocated_qty,
       reserved_qty = EXCLUDED.reserved_qty, incoming_qty = EXCLUDED.incoming_qty,
       last_absolute_as_of = EXCLUDED.last_absolute_as_of, stock_event_seq = EXCLUDED.stock_event_seq,
       updated_at = EXCLUDED.updated_at, last_command_id = EXCLUDED.last_command_id`,
    [
      JSON.stringify(
        levels.map((l) => ({
          shop: l.shop,
          product_id: l.product_id,
          location_id: l.location_id,
          barcode: l.barcode,
          on_hand_qty: l.on_hand_qty,
          available_qty: l.available_qty,
          allocated_qty: l.allocated_qty,
          reserved_qty: l.reserved_qty,
          incoming_qty: l.incoming_qty,
          last_absolute_as_of: l.last_absolute_as_of,
          stock_event_seq: l.stock_event_seq,
          created_at: l.created_at,
          updated_at: l.updated_at,
        })),
      ),
      commandId,
    ],
  );
}

/**
 * Narrow writes: levels whose content the command did not change (an absolute resend)
 * get only their D15b stamp and the command that last wrote them, by a plain UPDATE: no
 * INSERT … ON CONFLICT row lock and rewrite of every column.
 */
export async function stampLevels(tx: PoolClient, shop: string, levels: Level[], commandId: string): Promise<void> {
  if (levels.length === 0) return;
  await tx.query(
    `UPDATE inventory_levels l SET last_absolute_as_of = x.as_of, last_command_id = $5
       FROM unnest($2::uuid[], $3::uuid[], $4::timestamptz[]) AS x(product_id, location_id, as_of)
      WHERE l.shop = $1 AND l.product_id = x.product_id AND l.location_id = x.location_id`,
    [shop, levels.map((l) => l.product_id), levels.map((l) => l.location_id), levels.map((l) => l.last_absolute_as_of), commandId],
  );
}

/** One statement for all the command's log records; `actor` is the command's, the same for every record (D28). */
export async function insertInventoryLogs(tx: PoolClient, logs: InventoryLog[], actor: string): Promise<void> {
  if (logs.length === 0) return;
  await tx.query(
    `INSERT INTO inventory_update_logs
       (log_id, shop, product_id, location_id, barcode, change_type, change_source, before_data, after_data,
        changed_fields, idempotency_key, inventory_as_of, command_id, log_seq, created_at, actor)
     SELECT log_id, shop, product_id, location_id, barcode, change_type, change_source, before_data, after_data,
            ARRAY(SELECT jsonb_array_elements_text(changed_fields)), idempotency_key, inventory_as_of, command_id, log_seq, created_at,
            $2::text
       FROM jsonb_to_recordset($1::jsonb) AS x(log_id uuid, shop text, product_id uuid, location_id uuid, barcode text,
            change_type text, change_source text, before_data jsonb, after_data jsonb, changed_fields jsonb,
            idempotency_key text, inventory_as_of timestamptz, command_id uuid, log_seq integer, created_at timestamptz)`,
    [JSON.stringify(logs), actor],
  );
}

/**
 * Writes the daily rows the decider chose: new ones, and those whose quantities or source changed
 * (D16b); unchanged rows are not in `rows`, so they keep their inventory_as_of, command_id and
 * tuple. The snapshot endpoint owns its day's row and overwrites the daily job's (D16). No
 * "values IS DISTINCT FROM" guard here: a row moved away and back within one command is rewritten
 * with that command's id, as its lines sent one by one would (D6a), and such a guard would refuse it.
 */
export async function upsertDailyRows(tx: PoolClient, rows: DailyRow[]): Promise<void> {
  if (rows.length === 0) return;
  await tx.query(
    `INSERT INTO inventory_daily_snapshots
       (shop, product_id, location_id, snapshot_date, barcode, on_hand_qty, available_qty, allocated_qty, reserved_qty,
        incoming_qty, source, inventory_as_of, command_id)
     SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(shop text, product_id uuid, location_id uuid, snapshot_date date,
            barcode text, ${QTY_COLS}, source text, inventory_as_of timestamptz, command_id uuid)
     ON CONFLICT (shop, product_id, location_id, snapshot_date) DO UPDATE SET
       barcode = EXCLUDED.barcode, on_hand_qty = EXCLUDED.on_hand_qty, available_qty = EXCLUDED.available_qty,
       allocated_qty = EXCLUDED.allocated_qty, reserved_qty = EXCLUDED.reserved_qty, incoming_qty = EXCLUDED.incoming_qty,
       source = EXCLUDED.source, inventory_as_of = EXCLUDED.inventory_as_of, command_id = EXCLUDED.command_id`,
    [JSON.stringify(rows)],
  );
}
