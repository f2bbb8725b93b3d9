import type { StockLevelEvent } from '@ingest/contracts/types';
import { auditBatch, cloudEventHeaders, type OutboxEvent } from '../events.ts';
import { eventId } from '../ids.ts';
import type { InventoryMeta } from './inventoryCommand.ts';

// The events of an inventory write, built here for the decider path (LevelBook, projectInventory)
// and the set-based path (packages/projection/src/inventory) alike: only when a level crosses 0 is
// computed twice (LevelBook and the SQL); what the event then says is decided once.

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
