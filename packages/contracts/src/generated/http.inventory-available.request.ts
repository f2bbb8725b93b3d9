// Generated from schemas/http/inventory-available.request.json by scripts/gen-types.ts. Do not edit.

/**
 * POST /api/ingest/inventory-available (endpoint 5). lines are checked per mode by inventory-available.{absolute,delta}-lines.json.
 */
export interface InventoryAvailableRequest {
  /**
   * Shop domain
   */
  shop: string;
  source_system: string;
  mode: 'absolute' | 'delta';
  /**
   * Internal location UUID; an unknown id is 422 location_unresolved (D14).
   */
  location_id?: string;
  location?: ExternalLocationRef;
  lines: unknown[];
  inventory_as_of?: string;
  idempotency_key?: string;
}
/**
 * An external identifier of a location. At most 200 characters each: (shop, type, value) is indexed and an index row must fit.
 */
export interface ExternalLocationRef {
  identifier_type: string;
  identifier_value: string;
}
