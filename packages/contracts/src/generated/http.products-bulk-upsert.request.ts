// Generated from schemas/http/products-bulk-upsert.request.json by scripts/gen-types.ts. Do not edit.

/**
 * POST /api/products/bulk-upsert (shop in the x-shop header). Items are checked one by one against product.json; a bad item is reported in errors and does not stop the others.
 */
export interface ProductsBulkUpsertRequest {
  /**
   * @maxItems 10000
   */
  products: unknown[];
}
