import { locationRefKey, resolveLocation } from './location.ts';
import type { InventoryAvailableCommand } from './inventoryCommand.ts';
import { clampQty, isBefore, quantities, ZERO } from './level.ts';
import { LevelBook } from './levelBook.ts';
import { dedupedPlan, locationRejection, type InventoryPlan, type InventoryState } from './inventoryState.ts';
import { availableClamp, availableReply, newTally, productNotFound, staleLine, type AvailableClamp } from './outcome.ts';

/**
 * Endpoint 5: only available_qty changes. A missing level is created with on_hand_qty 0; a delta
 * below zero is stored as 0 (above QTY_MAX as QTY_MAX) and reported in clamped; a delta request whose idempotency_key was
 * already applied changes nothing (D19); logs only for changed lines; no daily rows.
 */
export function decideAvailable(state: InventoryState, command: InventoryAvailableCommand): InventoryPlan {
  const { payload } = command;
  const where = resolveLocation(state.locations.get(locationRefKey(payload.location)));
  if (!where.ok) return locationRejection(payload.location, where.reason);
  const locationId = where.location_id;
  const delta = payload.mode === 'delta';
  const key = command.idempotency_key;

  if (delta && key && state.appliedKey)
    return dedupedPlan(availableReply(command, locationId, newTally(), payload.lines.length), state.appliedKey, command);

  const book = new LevelBook(state.levels, command);
  const t = newTally<AvailableClamp>();

  for (const line of payload.lines) {
    const productId = state.products.get(line.barcode);
    if (!productId) {
      t.unresolved.push(productNotFound(line.barcode));
      continue;
    }
    const level = book.get(productId, locationId);
    const current = level ? quantities(level) : { ...ZERO };
    let available: number;
    if ('available_delta' in line) {
      const computed = current.available_qty + line.available_delta;
      available = clampQty(computed);
      if (available !== computed) {
        t.clamped.push(availableClamp(line.barcode, computed, available));
        t.clampedLines++;
      }
    } else {
      if (level?.last_absolute_as_of && isBefore(command.inventory_as_of, level.last_absolute_as_of)) {
        t.stale.push(staleLine(line.barcode, locationId, level.last_absolute_as_of));
        continue;
      }
      available = line.available_qty;
    }
    const w = book.write(
      { product_id: productId, location_id: locationId, barcode: line.barcode },
      { ...current, available_qty: available },
      delta ? 'available_delta' : 'available_set',
      { absolute: !delta },
    );
    if (w.changed) t.updated++;
    else t.unchanged++;
  }

  return {
    levels: book.rows(),
    logs: book.logs,
    daily: [],
    events: book.events,
    recordKey: delta && key ? { idempotency_key: key, payload_hash: command.payload_hash ?? '' } : null,
    reply: availableReply(command, locationId, t),
  };
}
