// Generated from schemas/http/order-lines.request.json by scripts/gen-types.ts. Do not edit.

/**
 * POST /api/order-line-master/bulk-upsert (endpoint 6). Rows are checked one by one by the projector (D20); a rejected row is reported, not fatal.
 */
export interface OrderLinesBulkUpsertRequest {
  /**
   * Shop domain
   */
  shop: string;
  /**
   * @minItems 1
   * @maxItems 5000
   */
  rows: [unknown, ...unknown[]];
  dry_run?: boolean;
  change_source?: string;
  ingest_run_id?: string;
  idempotency_key?: string;
  changed_by_user_id?: string;
}
