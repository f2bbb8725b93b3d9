import { locationRefKey, resolveLocation } from './location.ts';
import type { InventoryLevelsCommand } from './inventoryCommand.ts';
import { clampQty, isBefore, QTY_FIELDS, quantities, ZERO, type Quantities } from './level.ts';
import { LevelBook } from './levelBook.ts';
import { dedupedPlan, type InventoryPlan, type InventoryState } from './inventoryState.ts';
import {
  levelsClamp,
  levelsReply,
  locationNotResolved,
  newTally,
  productNotFound,
  staleLine,
  stockZeroLine,
  type LevelsClamp,
  type StockZeroLine,
} from './outcome.ts';

/**
 * Endpoint 3 (D17): many locations per request, absolute or delta for the five quantities. A line
 * whose location or product cannot be resolved is reported per line, not refused; results below
 * zero are stored as 0 (above QTY_MAX as QTY_MAX) and reported; moves of available_qty to 0 are listed in stock_zero (D18).
 */
export function decideLevels(state: InventoryState, command: InventoryLevelsCommand): InventoryPlan {
  const { payload } = command;
  const delta = payload.mode === 'delta';
  const key = command.idempotency_key;
  if (delta && key && state.appliedKey)
    return dedupedPlan(levelsReply(command, newTally(), [], payload.lines.length), state.appliedKey, command);

  const book = new LevelBook(state.levels, command);
  const t = newTally<LevelsClamp>();
  const stockZero: StockZeroLine[] = [];

  for (const line of payload.lines) {
    const where = resolveLocation(state.locations.get(locationRefKey(line.location)));
    if (!where.ok) {
      t.unresolved.push(locationNotResolved(line.barcode, line.location, where.reason));
      continue;
    }
    const locationId = where.location_id;
    const productId = state.products.get(line.barcode);
    if (!productId) {
      t.unresolved.push(productNotFound(line.barcode, locationId));
      continue;
    }
    const level = book.get(productId, locationId);
    const current = level ? quantities(level) : { ...ZERO };
    const next: Quantities = { ...current };
    if (delta) {
      let wasClamped = false;
      for (const f of QTY_FIELDS) {
        const d = line.delta?.[f];
        if (d === undefined) continue;
        const computed = current[f] + d;
        next[f] = clampQty(computed);
        if (next[f] !== computed) {
          t.clamped.push(levelsClamp(line.barcode, locationId, f, computed, next[f]));
          wasClamped = true;
        }
      }
      if (wasClamped) t.clampedLines++;
    } else {
      if (level?.last_absolute_as_of && isBefore(command.inventory_as_of, level.last_absolute_as_of)) {
        t.stale.push(staleLine(line.barcode, locationId, level.last_absolute_as_of));
        continue;
      }
      for (const f of QTY_FIELDS) {
        const v = line.set?.[f];
        if (v !== undefined) next[f] = v;
      }
    }
    const w = book.write(
      { product_id: productId, location_id: locationId, barcode: line.barcode },
      next,
      delta ? 'levels_delta' : 'levels_set',
      {
        absolute: !delta,
      },
    );
    if (w.changed) t.updated++;
    else t.unchanged++;
    if (w.stockEvent === 'stock_zero') stockZero.push(stockZeroLine(line.barcode, locationId));
  }

  return {
    levels: book.rows(),
    logs: book.logs,
    daily: [],
    events: book.events,
    recordKey: delta && key ? { idempotency_key: key, payload_hash: command.payload_hash ?? '' } : null,
    reply: levelsReply(command, t, stockZero),
  };
}
