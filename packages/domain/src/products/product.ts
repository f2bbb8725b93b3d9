import type { ProductInput } from '@ingest/contracts/types';

/**
 * A product as stored in public.products (the fields the decider reads and writes): the item of
 * schemas/http/product.json with every field present (null or the default when left out).
 */
export type Product = { [K in keyof ProductInput]-?: Exclude<ProductInput[K], undefined> } & {
  product_id: string;
  shop: string;
  created_at: string;
  updated_at: string;
};

/** The fields a client can write, in a stable order (logs list changed fields in this order). */
export const PRODUCT_FIELDS = [
  'product_name',
  'sku',
  'variant_name',
  'brand',
  'category_l1',
  'category_l2',
  'category_l3',
  'current_price',
  'current_cost',
  'currency',
  'is_active',
] as const;
export type ProductField = (typeof PRODUCT_FIELDS)[number];

export type ProductChangeType = 'created' | 'price_change' | 'name_change' | 'attribute_change';

/** Which log a changed field belongs to (D10). */
export function changeTypeOf(field: ProductField): Exclude<ProductChangeType, 'created'> {
  if (field === 'current_price' || field === 'current_cost') return 'price_change';
  if (field === 'product_name') return 'name_change';
  return 'attribute_change';
}

/** The business fields of a product, as written to before_data / after_data. */
export function productData(p: Product): Record<string, unknown> {
  const data: Record<string, unknown> = { product_id: p.product_id, shop: p.shop, barcode: p.barcode };
  for (const f of PRODUCT_FIELDS) data[f] = p[f];
  return data;
}
