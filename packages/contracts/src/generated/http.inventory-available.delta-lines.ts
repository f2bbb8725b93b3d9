// Generated from schemas/http/inventory-available.delta-lines.json by scripts/gen-types.ts. Do not edit.

export interface InventoryAvailableDeltaLines {
  /**
   * @maxItems 10000
   */
  lines: InventoryAvailableDeltaLine[];
}
export interface InventoryAvailableDeltaLine {
  barcode: string;
  available_delta: number;
}
