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
/**
 * An external identifier of a location. At most 200 characters each: (shop, type, value) is indexed and an index row must fit.
 */
export interface ExternalLocationRef {
  identifier_type: string;
  identifier_value: string;
}
