// Generated from schemas/http/inventory-common.json by scripts/gen-types.ts. Do not edit.

/**
 * Shared definitions of the inventory endpoints.
 */
export interface InventoryCommon {
  [k: string]: unknown | undefined;
}
