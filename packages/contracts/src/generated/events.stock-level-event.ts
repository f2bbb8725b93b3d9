// Generated from schemas/events/stock-level-event.json by scripts/gen-types.ts. Do not edit.

/**
 * stock_zero on inventory.stock-zero.v1 and stock_restored on inventory.stock-restored.v1 (D18). Kafka key = shop; CloudEvents binary headers ce_id = event_id.
 */
export interface StockLevelEvent {
  event_id: string;
  event_type: 'stock_zero' | 'stock_restored';
  schema_version: 1;
  shop: string;
  product_id: string;
  barcode: string;
  location_id: string;
  previous_available_qty: number;
  available_qty: number;
  on_hand_qty: number;
  change_type: 'snapshot' | 'available_set' | 'available_delta' | 'levels_set' | 'levels_delta';
  source_system: string;
  occurred_at: string;
  command_id: string;
  /**
   * Per (shop, product, location): grows by one with each event of that level
   */
  seq: number;
}
