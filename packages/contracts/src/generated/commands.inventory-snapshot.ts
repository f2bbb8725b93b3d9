// Generated from schemas/commands/inventory-snapshot.json by scripts/gen-types.ts. Do not edit.

/**
 * @maxItems 10000
 */
export type Lines = InventorySnapshotLine[];

export interface InventorySnapshotPayload {
  location: LocationRef;
  snapshot_date: string;
  lines: Lines;
}
export interface LocationRef {
  location_id?: string;
  location?: ExternalLocationRef;
}
/**
 * An external identifier of a location. At most 200 characters each: (shop, type, value) is indexed and an index row must fit.
 */
export interface ExternalLocationRef {
  identifier_type: string;
  identifier_value: string;
}
export interface InventorySnapshotLine {
  barcode: string;
  on_hand_qty: number;
  available_qty?: number;
  allocated_qty?: number;
  reserved_qty?: number;
  incoming_qty?: number;
}
