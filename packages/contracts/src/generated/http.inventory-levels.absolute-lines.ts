// Generated from schemas/http/inventory-levels.absolute-lines.json by scripts/gen-types.ts. Do not edit.

export interface InventoryLevelsAbsoluteLines {
  /**
   * @maxItems 10000
   */
  lines: InventoryLevelsAbsoluteLine[];
}
/**
 * Omitted quantities stay unchanged; a new level starts at 0 (D17).
 */
export interface InventoryLevelsAbsoluteLine {
  barcode: string;
  /**
   * Internal location UUID; an unknown id is 422 location_unresolved (D14).
   */
  location_id?: string;
  location?: ExternalLocationRef;
  on_hand_qty?: number;
  available_qty?: number;
  allocated_qty?: number;
  reserved_qty?: number;
  incoming_qty?: number;
}
/**
 * An external identifier of a location. At most 200 characters each: (shop, type, value) is indexed and an index row must fit.
 */
export interface ExternalLocationRef {
  identifier_type: string;
  identifier_value: string;
}
