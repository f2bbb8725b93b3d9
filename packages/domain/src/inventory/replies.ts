import type { Reply } from '../commandMeta.ts';
import type { InventoryAvailableCommand, InventoryLevelsCommand, InventorySnapshotCommand } from './inventoryCommand.ts';
import type { QtyField } from './level.ts';
import type { LocationRef } from './location.ts';

// The response bodies of endpoints 3, 4 and 5 and their items, built here for the deciders and the
// set-based projection (packages/projection/src/inventory) alike: the two paths count the lines
// each their own way, and hand the counts and items to these functions. Key order is part of the
// shape: the stored reply is compared byte for byte by the equivalence properties.

/** A line not applied for its product or its location (spec: `unresolved`; D17 adds the location reasons). */
export interface Unresolved {
  barcode: string;
  location_id?: string;
  reason: 'product_not_found' | 'location_unresolved' | 'location_ambiguous';
}

/** D15b: an absolute line older than its level's last absolute write. */
export interface StaleLine {
  barcode: string;
  location_id: string;
  stored_as_of: string;
}

/** Endpoint 5: a delta result outside 0..QTY_MAX, with the value stored instead. */
export interface AvailableClamp {
  barcode: string;
  computed: number;
  set: number;
}

/** Endpoint 3 (D17): the same, per field. */
export interface LevelsClamp {
  barcode: string;
  location_id: string;
  field: QtyField;
  computed: number;
  set: number;
}

/** Endpoint 3 (D18): a line that moved its level's available_qty to 0. */
export interface StockZeroLine {
  barcode: string;
  location_id: string;
}

/** A barcode that is not a product of the shop; endpoint 3 names the line's location, 4 and 5 have one for the request. */
export function productNotFound(barcode: string, locationId?: string): Unresolved {
  return locationId === undefined
    ? { barcode, reason: 'product_not_found' }
    : { barcode, location_id: locationId, reason: 'product_not_found' };
}

/** D17: a levels line whose own location does not resolve, with the location_id it named, if it named one. */
export function locationNotResolved(barcode: string, ref: LocationRef, reason: 'location_unresolved' | 'location_ambiguous'): Unresolved {
  return { barcode, ...('location_id' in ref ? { location_id: ref.location_id } : {}), reason };
}

export function staleLine(barcode: string, locationId: string, storedAsOf: string): StaleLine {
  return { barcode, location_id: locationId, stored_as_of: storedAsOf };
}

export function availableClamp(barcode: string, computed: number, set: number): AvailableClamp {
  return { barcode, computed, set };
}

export function levelsClamp(barcode: string, locationId: string, field: QtyField, computed: number, set: number): LevelsClamp {
  return { barcode, location_id: locationId, field, computed, set };
}

export function stockZeroLine(barcode: string, locationId: string): StockZeroLine {
  return { barcode, location_id: locationId };
}

/** What the lines of endpoints 3 and 5 came to. */
export interface LineTally<Clamp> {
  updated: number;
  unchanged: number;
  unresolved: Unresolved[];
  clamped: Clamp[];
  /** Lines with at least one clamped value (endpoint 3 may clamp several fields of one line). */
  clampedLines: number;
  stale: StaleLine[];
}

export function newTally<Clamp>(): LineTally<Clamp> {
  return { updated: 0, unchanged: 0, unresolved: [], clamped: [], clampedLines: 0, stale: [] };
}

/** What endpoint 4's lines came to (D15a: every resolved line written is upserted, the changed ones logged). */
export interface SnapshotTally {
  upserted: number;
  logsWritten: number;
  unresolved: Unresolved[];
  stale: StaleLine[];
}

/** Endpoint 4's response body (D15b: lines_stale and stale are added fields). */
export function snapshotReply(c: InventorySnapshotCommand, locationId: string, t: SnapshotTally): Reply {
  return {
    status: 200,
    body: {
      ok: true,
      shop: c.shop,
      location_id: locationId,
      lines_processed: c.payload.lines.length,
      lines_upserted: t.upserted,
      lines_unresolved: t.unresolved.length,
      logs_written: t.logsWritten,
      lines_stale: t.stale.length,
      unresolved: t.unresolved,
      stale: t.stale,
    },
  };
}

/** Endpoint 5's response body; `deduped` lines when its idempotency key was applied already (D19). */
export function availableReply(c: InventoryAvailableCommand, locationId: string, t: LineTally<AvailableClamp>, deduped = 0): Reply {
  const base = { ok: true, mode: c.payload.mode, shop: c.shop, location_id: locationId, lines_processed: c.payload.lines.length };
  return { status: 200, body: tallyBody(base, t, deduped) };
}

/** Endpoint 3's response body (D17), with the lines that moved a level to 0 (D18). */
export function levelsReply(c: InventoryLevelsCommand, t: LineTally<LevelsClamp>, stockZero: StockZeroLine[], deduped = 0): Reply {
  const base = { ok: true, mode: c.payload.mode, shop: c.shop, lines_processed: c.payload.lines.length };
  return { status: 200, body: { ...tallyBody(base, t, deduped), stock_zero: stockZero } };
}

/** The counts of endpoints 3 and 5 (D15a: lines_unchanged, D15b: lines_stale are added fields). */
function tallyBody(base: Record<string, unknown>, t: LineTally<unknown>, deduped: number): Record<string, unknown> {
  return {
    ...base,
    lines_updated: t.updated,
    lines_unchanged: t.unchanged,
    lines_unresolved: t.unresolved.length,
    lines_clamped: t.clampedLines,
    lines_deduped: deduped,
    lines_stale: t.stale.length,
    unresolved: t.unresolved,
    clamped: t.clamped,
    stale: t.stale,
  };
}
