import { describeRef, locationRefKey, resolveLocation } from './location.ts';
import type { InventoryAvailableCommand } from './inventoryCommand.ts';
import { isBefore, quantities, ZERO } from './level.ts';
import { LevelBook } from './levelBook.ts';
import { rejected, reuseWarnings, type InventoryPlan, type InventoryState, type StaleLine, type Unresolved } from './inventoryState.ts';

/**
 * Endpoint 5: only available_qty changes. A missing level is created with on_hand_qty 0; a delta
 * below zero is stored as 0 and reported in clamped; a delta request whose idempotency_key was
 * already applied changes nothing (D19); logs only for changed lines; no daily rows.
 */
export function decideAvailable(state: InventoryState, command: InventoryAvailableCommand): InventoryPlan {
  const { payload } = command;
  const where = resolveLocation(state.locations.get(locationRefKey(payload.location)));
  if (!where.ok) return rejected(422, where.reason, `${describeRef(payload.location)} ${where.reason === 'location_ambiguous' ? 'matches several locations' : 'is not a location of this shop'}`);
  const locationId = where.location_id;
  const delta = payload.mode === 'delta';
  const key = command.idempotency_key;

  const base = { ok: true, mode: payload.mode, shop: command.shop, location_id: locationId, lines_processed: payload.lines.length };
  if (delta && key && state.appliedKey) {
    const warnings = reuseWarnings(state.appliedKey.payload_hash, command.payload_hash, key);
    return {
      levels: [], logs: [], daily: [], events: [], recordKey: null,
      reply: {
        status: 200,
        body: {
          ...base, lines_updated: 0, lines_unchanged: 0, lines_unresolved: 0, lines_clamped: 0,
          lines_deduped: payload.lines.length, lines_stale: 0, unresolved: [], clamped: [], stale: [],
          ...(warnings.length ? { warnings } : {}),
        },
      },
    };
  }

  const book = new LevelBook(state.levels, command);
  const unresolved: Unresolved[] = [];
  const clamped: Array<{ barcode: string; computed: number; set: number }> = [];
  const stale: StaleLine[] = [];
  let updated = 0;
  let unchanged = 0;

  for (const line of payload.lines) {
    const productId = state.products.get(line.barcode);
    if (!productId) {
      unresolved.push({ barcode: line.barcode, reason: 'product_not_found' });
      continue;
    }
    const level = book.get(productId, locationId);
    const current = level ? quantities(level) : { ...ZERO };
    let available: number;
    if ('available_delta' in line) {
      const computed = current.available_qty + line.available_delta;
      available = Math.max(0, computed);
      if (computed < 0) clamped.push({ barcode: line.barcode, computed, set: available });
    } else {
      if (level?.last_absolute_as_of && isBefore(command.inventory_as_of, level.last_absolute_as_of)) {
        stale.push({ barcode: line.barcode, location_id: locationId, stored_as_of: level.last_absolute_as_of });
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
    if (w.changed) updated++;
    else unchanged++;
  }

  return {
    levels: book.rows(),
    logs: book.logs,
    daily: [],
    events: book.events,
    recordKey: delta && key ? { idempotency_key: key, payload_hash: command.payload_hash } : null,
    reply: {
      status: 200,
      body: {
        ...base,
        lines_updated: updated,
        lines_unchanged: unchanged,
        lines_unresolved: unresolved.length,
        lines_clamped: clamped.length,
        lines_deduped: 0,
        lines_stale: stale.length,
        unresolved,
        clamped,
        stale,
      },
    },
  };
}
