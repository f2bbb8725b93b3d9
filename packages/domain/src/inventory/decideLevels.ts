import { locationRefKey, resolveLocation } from './location.ts';
import type { InventoryLevelsCommand } from './inventoryCommand.ts';
import { isBefore, QTY_FIELDS, quantities, ZERO, type Quantities } from './level.ts';
import { LevelBook } from './levelBook.ts';
import { reuseWarnings, type InventoryPlan, type InventoryState, type StaleLine, type Unresolved } from './inventoryState.ts';

type Clamp = { barcode: string; location_id: string; field: string; computed: number; set: number };

/**
 * Endpoint 3 (D17): many locations per request, absolute or delta for the five quantities. A line
 * whose location or product cannot be resolved is reported per line, not refused; results below
 * zero are stored as 0 and reported; moves of available_qty to 0 are listed in stock_zero (D18).
 */
export function decideLevels(state: InventoryState, command: InventoryLevelsCommand): InventoryPlan {
  const { payload } = command;
  const delta = payload.mode === 'delta';
  const key = command.idempotency_key;
  const base = { ok: true, mode: payload.mode, shop: command.shop, lines_processed: payload.lines.length };
  const empty = { unresolved: [], clamped: [], stale: [], stock_zero: [] };

  if (delta && key && state.appliedKey) {
    const warnings = reuseWarnings(state.appliedKey.payload_hash, command.payload_hash, key);
    return {
      levels: [], logs: [], daily: [], events: [], recordKey: null,
      reply: {
        status: 200,
        body: {
          ...base, lines_updated: 0, lines_unchanged: 0, lines_unresolved: 0, lines_clamped: 0,
          lines_deduped: payload.lines.length, lines_stale: 0, ...empty, ...(warnings.length ? { warnings } : {}),
        },
      },
    };
  }

  const book = new LevelBook(state.levels, command);
  const unresolved: Unresolved[] = [];
  const clamped: Clamp[] = [];
  const stale: StaleLine[] = [];
  const stockZero: Array<{ barcode: string; location_id: string }> = [];
  let updated = 0;
  let unchanged = 0;
  let clampedLines = 0;

  for (const line of payload.lines) {
    const where = resolveLocation(state.locations.get(locationRefKey(line.location)));
    if (!where.ok) {
      unresolved.push({ barcode: line.barcode, ...('location_id' in line.location ? { location_id: line.location.location_id } : {}), reason: where.reason });
      continue;
    }
    const locationId = where.location_id;
    const productId = state.products.get(line.barcode);
    if (!productId) {
      unresolved.push({ barcode: line.barcode, location_id: locationId, reason: 'product_not_found' });
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
        next[f] = Math.max(0, computed);
        if (computed < 0) {
          clamped.push({ barcode: line.barcode, location_id: locationId, field: f, computed, set: next[f] });
          wasClamped = true;
        }
      }
      if (wasClamped) clampedLines++;
    } else {
      if (level?.last_absolute_as_of && isBefore(command.inventory_as_of, level.last_absolute_as_of)) {
        stale.push({ barcode: line.barcode, location_id: locationId, stored_as_of: level.last_absolute_as_of });
        continue;
      }
      for (const f of QTY_FIELDS) {
        const v = line.set?.[f];
        if (v !== undefined) next[f] = v;
      }
    }
    const w = book.write({ product_id: productId, location_id: locationId, barcode: line.barcode }, next, delta ? 'levels_delta' : 'levels_set', {
      absolute: !delta,
    });
    if (w.changed) updated++;
    else unchanged++;
    if (w.stockEvent === 'stock_zero') stockZero.push({ barcode: line.barcode, location_id: locationId });
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
        lines_clamped: clampedLines,
        lines_deduped: 0,
        lines_stale: stale.length,
        unresolved,
        clamped,
        stale,
        stock_zero: stockZero,
      },
    },
  };
}
