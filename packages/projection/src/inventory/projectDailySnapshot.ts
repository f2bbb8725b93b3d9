import { dailySnapshotRuns, type PoolClient } from '@ingest/db';
import type { DailySnapshotCommand } from '@ingest/domain';
import type { Projection } from '../projection.ts';

/**
 * D16: copy every level of the shop into the daily table for the date, once per (shop, date),
 * without overwriting rows the snapshot endpoint already wrote for that day. One statement.
 */
export async function projectDailySnapshot(tx: PoolClient, c: DailySnapshotCommand): Promise<Projection> {
  const date = c.payload.snapshot_date;
  if (!(await dailySnapshotRuns.record(tx, c.shop, date, c.command_id, c.received_at))) {
    return {
      reply: { status: 200, body: { ok: true, shop: c.shop, snapshot_date: date, rows_written: 0, already_done: true } },
      events: [],
    };
  }
  const copied = await tx.query(
    `INSERT INTO inventory_daily_snapshots
       (shop, product_id, location_id, snapshot_date, barcode, on_hand_qty, available_qty, allocated_qty, reserved_qty,
        incoming_qty, source, inventory_as_of, command_id)
     SELECT shop, product_id, location_id, $2::date, barcode, on_hand_qty, available_qty, allocated_qty, reserved_qty,
            incoming_qty, 'daily_job', $3::timestamptz, $4::uuid
       FROM inventory_levels WHERE shop = $1
     ON CONFLICT (shop, product_id, location_id, snapshot_date) DO NOTHING`,
    [c.shop, date, c.received_at, c.command_id],
  );
  return { reply: { status: 200, body: { ok: true, shop: c.shop, snapshot_date: date, rows_written: copied.rowCount ?? 0 } }, events: [] };
}
