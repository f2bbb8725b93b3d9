// Generated from schemas/http/products-ingest.request.json by scripts/gen-types.ts. Do not edit.

/**
 * POST /api/ingest/products (shop in the body). Same command as the bulk upsert (D7).
 */
export interface ProductsIngestRequest {
  /**
   * Shop domain
   */
  shop: string;
  /**
   * @maxItems 10000
   */
  products: unknown[];
}
