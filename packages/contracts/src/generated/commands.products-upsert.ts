// Generated from schemas/commands/products-upsert.json by scripts/gen-types.ts. Do not edit.

/**
 * Payload of a products.upsert command. items holds every request item in order: either a valid product or the gateway's per-item rejection.
 */
export interface ProductsUpsertPayload {
  /**
   * Which response shape the caller expects (D7)
   */
  response: 'bulk_upsert' | 'ingest';
  items: {
    product?: ProductInput;
    rejected?: {
      barcode: string;
      error: string;
    };
  }[];
}
/**
 * One product of a products upsert (endpoints 1 and 2). Omitted optional fields keep their stored value; null clears them (D10).
 */
export interface ProductInput {
  barcode: string;
  product_name: string;
  sku?: string | null;
  variant_name?: string | null;
  brand?: string | null;
  category_l1?: string | null;
  category_l2?: string | null;
  category_l3?: string | null;
  current_price?: number | null;
  current_cost?: number | null;
  currency?: string | null;
  is_active?: boolean;
}
