import type { StockLevelEvent } from '@ingest/contracts/types';
import type { Reply } from '../commandMeta.ts';
import { auditBatch, cloudEventHeaders, type OutboxEvent } from '../events.ts';
import { eventId } from '../ids.ts';
import type { InventoryAvailableCommand, InventoryLevelsCommand, InventoryMeta, InventorySnapshotCommand } from './inventoryCommand.ts';
import type { QtyField } from './level.ts';
import type { LocationRef } from './location.ts';

// What an inventory write answers and emits, built here for the deciders and the set-based
// projection (packages/projection/src/inventory) alike, so only the row arithmetic exists twice.
//
// The replies of endpoints 3, 4 and 5 and their items: the two paths count the lines each their
// own way, and hand the counts and items to these functions. Key order is part of the shape: the
// stored reply is compared byte for byte by the equivalence properties.

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

// The events: only when a level crosses 0 is computed twice (LevelBook and the SQL); what the
// event then says is decided once.

/** The change types of schemas/events/stock-level-event.json (and of inventory_update_logs). */
export type InventoryChangeType = StockLevelEvent['change_type'];

export type StockEventKind = StockLevelEvent['event_type'];

/** What a stock event says about its level (D18): the level after the write and its available quantity before. */
export type StockChange = Pick<
  StockLevelEvent,
  'product_id' | 'location_id' | 'barcode' | 'previous_available_qty' | 'available_qty' | 'on_hand_qty' | 'seq'
>;

/** A stock_zero / stock_restored event (D18): CloudEvents headers, the schema's payload, an id derived from the level's seq (D3). */
export function stockEvent(c: InventoryMeta, kind: StockEventKind, changeType: InventoryChangeType, e: StockChange): OutboxEvent {
  const id = eventId(c.command_id, kind, `${e.product_id}|${e.location_id}|${e.seq}`);
  return {
    event_id: id,
    channel: kind,
    key: c.shop,
    // The actor too (D28), as on the audit events: the write that moved the level is one shop's command,
    // and a consumer of stock events (an alert, a reorder) may want to know which key caused it.
    headers: cloudEventHeaders(
      id,
      `com.retail-ingestion.inventory.${kind}.v1`,
      c.inventory_as_of,
      c.actor,
      `${e.product_id}/${e.location_id}`,
    ),
    payload: {
      event_id: id,
      event_type: kind,
      schema_version: 1,
      shop: c.shop,
      product_id: e.product_id,
      barcode: e.barcode,
      location_id: e.location_id,
      previous_available_qty: e.previous_available_qty,
      available_qty: e.available_qty,
      on_hand_qty: e.on_hand_qty,
      change_type: changeType,
      source_system: c.source_system,
      occurred_at: c.inventory_as_of,
      command_id: c.command_id,
      seq: e.seq,
    } satisfies StockLevelEvent,
    command_id: c.command_id,
  };
}

/**
 * The outbox rows of an inventory write (D5): one audit batch when it wrote update logs, then its
 * stock events in line order.
 */
export function inventoryEvents(c: Pick<InventoryMeta, 'command_id' | 'shop'>, logsWritten: number, stock: OutboxEvent[]): OutboxEvent[] {
  return [...(logsWritten > 0 ? [auditBatch('inventory_update_logs', c.command_id, c.shop)] : []), ...stock];
}
