// Generated from schemas/commands/inventory-levels.json by scripts/gen-types.ts. Do not edit.

export interface InventoryLevelsPayload {
  mode: 'absolute' | 'delta';
  lines: {
    barcode: string;
    location: LocationRef;
    set?: {
      on_hand_qty?: number;
      available_qty?: number;
      allocated_qty?: number;
      reserved_qty?: number;
      incoming_qty?: number;
    };
    delta?: {
      on_hand_qty?: number;
      available_qty?: number;
      allocated_qty?: number;
      reserved_qty?: number;
      incoming_qty?: number;
    };
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
