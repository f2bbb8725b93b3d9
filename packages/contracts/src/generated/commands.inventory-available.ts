// Generated from schemas/commands/inventory-available.json by scripts/gen-types.ts. Do not edit.

export interface InventoryAvailablePayload {
  mode: 'absolute' | 'delta';
  location: LocationRef;
  lines: {
    barcode: string;
    available_qty?: number;
    available_delta?: number;
  }[];
}
export interface LocationRef {
  location_id?: string;
  location?: ExternalLocationRef;
}
export interface ExternalLocationRef {
  identifier_type: string;
  identifier_value: string;
}
