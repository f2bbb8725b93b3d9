// Generated from schemas/http/inventory-levels.delta-lines.json by scripts/gen-types.ts. Do not edit.

export interface InventoryLevelsDeltaLines {
  /**
   * @maxItems 10000
   */
  lines: InventoryLevelsDeltaLine[];
}
/**
 * <quantity>_delta adds to the stored value; results below 0 are stored as 0 (D17).
 */
export interface InventoryLevelsDeltaLine {
  barcode: string;
  /**
   * Internal location UUID; an unknown id is 422 location_unresolved (D14).
   */
  location_id?: string;
  location?: ExternalLocationRef;
  on_hand_delta?: number;
  /**
   * Alias of on_hand_delta.
   */
  on_hand_qty_delta?: number;
  available_delta?: number;
  /**
   * Alias of available_delta.
   */
  available_qty_delta?: number;
  allocated_delta?: number;
  /**
   * Alias of allocated_delta.
   */
  allocated_qty_delta?: number;
  reserved_delta?: number;
  /**
   * Alias of reserved_delta.
   */
  reserved_qty_delta?: number;
  incoming_delta?: number;
  /**
   * Alias of incoming_delta.
   */
  incoming_qty_delta?: number;
}
/**
 * An external identifier of a location. At most 200 characters each: (shop, type, value) is indexed and an index row must fit.
 */
export interface ExternalLocationRef {
  identifier_type: string;
  identifier_value: string;
}
