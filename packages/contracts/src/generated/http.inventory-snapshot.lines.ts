// Generated from schemas/http/inventory-snapshot.lines.json by scripts/gen-types.ts. Do not edit.

export interface InventorySnapshotLines {
  /**
   * @maxItems 10000
   */
  lines: InventorySnapshotLine[];
}
export interface InventorySnapshotLine {
  barcode: string;
  on_hand_qty: number;
  available_qty?: number;
  allocated_qty?: number;
  reserved_qty?: number;
  incoming_qty?: number;
}
