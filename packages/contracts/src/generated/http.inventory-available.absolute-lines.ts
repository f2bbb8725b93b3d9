// Generated from schemas/http/inventory-available.absolute-lines.json by scripts/gen-types.ts. Do not edit.

export interface InventoryAvailableAbsoluteLines {
  /**
   * @maxItems 10000
   */
  lines: InventoryAvailableAbsoluteLine[];
}
export interface InventoryAvailableAbsoluteLine {
  barcode: string;
  available_qty: number;
}
