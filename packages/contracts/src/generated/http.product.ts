// Generated from schemas/http/product.json by scripts/gen-types.ts. Do not edit.

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
