// Generated from schemas/http/inventory-levels.request.json by scripts/gen-types.ts. Do not edit.

/**
 * POST /api/inventory-levels/bulk-upsert (endpoint 3, D17). Each line names its own location.
 */
export interface InventoryLevelsRequest {
  /**
   * Shop domain
   */
  shop: string;
  source_system: string;
  mode: 'absolute' | 'delta';
  lines: unknown[];
  inventory_as_of?: string;
  idempotency_key?: string;
}
