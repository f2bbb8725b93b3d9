import { locationRefKey, resolveLocation } from './location.ts';
import type { InventorySnapshotCommand } from './inventoryCommand.ts';
import { DailyBook } from './dailyBook.ts';
import { isBefore, type Quantities } from './level.ts';
import { LevelBook } from './levelBook.ts';
import { locationRejection, type InventoryPlan, type InventoryState } from './inventoryState.ts';
import { productNotFound, snapshotReply, staleLine, type StaleLine, type Unresolved } from './outcome.ts';

/**
 * Endpoint 4: the absolute stock of one location. Levels are upserted; the day's snapshot row is
 * written only when new or when its quantities or source change (D16b); logs only for changed
 * lines; unknown barcodes are skipped as product_not_found; products absent from the lines are
 * left alone (D15); an older as-of than the level's last absolute write is stale and not applied,
 * neither to the level nor to the daily row (D15b).
 */
export function decideSnapshot(state: InventoryState, command: InventorySnapshotCommand): InventoryPlan {
  const { payload } = command;
  const where = resolveLocation(state.locations.get(locationRefKey(payload.location)));
  if (!where.ok) return locationRejection(payload.location, where.reason);
  const locationId = where.location_id;

  const book = new LevelBook(state.levels, command);
  const unresolved: Unresolved[] = [];
  const stale: StaleLine[] = [];
  const daily = new DailyBook(state.daily);
  let upserted = 0;

  for (const line of payload.lines) {
    const productId = state.products.get(line.barcode);
    if (!productId) {
      unresolved.push(productNotFound(line.barcode));
      continue;
    }
    const level = book.get(productId, locationId);
    if (level?.last_absolute_as_of && isBefore(command.inventory_as_of, level.last_absolute_as_of)) {
      stale.push(staleLine(line.barcode, locationId, level.last_absolute_as_of));
      continue;
    }
    const next: Quantities = {
      on_hand_qty: line.on_hand_qty,
      available_qty: line.available_qty ?? line.on_hand_qty,
      allocated_qty: line.allocated_qty ?? 0,
      reserved_qty: line.reserved_qty ?? 0,
      incoming_qty: line.incoming_qty ?? 0,
    };
    const target = { product_id: productId, location_id: locationId, barcode: line.barcode };
    book.write(target, next, 'snapshot', { absolute: true });
    // D15a: every resolved line written counts, a no-op rewrite of the level included; whether the
    // daily row is rewritten too (D16b) does not change the count.
    upserted++;
    daily.write({
      shop: command.shop,
      ...target,
      snapshot_date: payload.snapshot_date,
      ...next,
      source: 'snapshot',
      inventory_as_of: command.inventory_as_of,
      command_id: command.command_id,
    });
  }

  return {
    levels: book.rows(),
    logs: book.logs,
    daily: daily.rows(),
    events: book.events,
    recordKey: null,
    reply: snapshotReply(command, locationId, { upserted, logsWritten: book.logs.length, unresolved, stale }),
  };
}
