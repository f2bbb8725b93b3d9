// Generated from schemas/http/inventory-snapshot.request.json by scripts/gen-types.ts. Do not edit.

/**
 * POST /api/ingest/inventory-snapshot (endpoint 4). lines are checked by inventory-snapshot.lines.json (422 on a bad line, D11).
 */
export interface InventorySnapshotRequest {
  /**
   * Shop domain
   */
  shop: string;
  source_system: string;
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
