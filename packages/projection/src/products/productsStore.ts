import type { PoolClient } from '@ingest/db';
import type { Product, ProductLog } from '@ingest/domain';

const COLUMNS = `product_id uuid, shop text, barcode text, product_name text, sku text, variant_name text, brand text,
  category_l1 text, category_l2 text, category_l3 text, current_price numeric, current_cost numeric,
  currency text, is_active boolean, created_at timestamptz, updated_at timestamptz`;

/** The shop's stored products for the given barcodes (the shop is locked: lockShop). */
export async function loadProducts(tx: PoolClient, shop: string, barcodes: string[]): Promise<Map<string, Product>> {
  if (barcodes.length === 0) return new Map();
  const { rows } = await tx.query<Product & { created_at: Date; updated_at: Date }>(
    `SELECT product_id, shop, barcode, product_name, sku, variant_name, brand, category_l1, category_l2,
            category_l3, current_price, current_cost, currency, is_active, created_at, updated_at
       FROM products
      WHERE shop = $1 AND barcode = ANY($2::text[])`,
    [shop, barcodes],
  );
  return new Map(rows.map((r) => [r.barcode, { ...r, created_at: r.created_at.toISOString(), updated_at: r.updated_at.toISOString() }]));
}

/** One statement for all the command's product rows. */
export async function upsertProducts(tx: PoolClient, products: Product[], commandId: string): Promise<void> {
  if (products.length === 0) return;
  await tx.query(
    `INSERT INTO products
       (product_id, shop, barcode, product_name, sku, variant_name, brand, category_l1, category_l2, category_l3,
        current_price, current_cost, currency, is_active, created_at, updated_at, last_command_id)
     SELECT x.*, $2::uuid FROM jsonb_to_recordset($1::jsonb) AS x(${COLUMNS})
     ON CONFLICT (shop, barcode) DO UPDATE SET
       product_name = EXCLUDED.product_name, sku = EXCLUDED.sku, variant_name = EXCLUDED.variant_name,
       brand = EXCLUDED.brand, category_l1 = EXCLUDED.category_l1, category_l2 = EXCLUDED.category_l2,
       category_l3 = EXCLUDED.category_l3, current_price = EXCLUDED.current_price,
       current_cost = EXCLUDED.current_cost, currency = EXCLUDED.currency, is_active = EXCLUDED.is_active,
       updated_at = EXCLUDED.updated_at, last_command_id = EXCLUDED.last_command_id`,
    [JSON.stringify(products), commandId],
  );
}

/** One statement for all the command's log records; `actor` is the command's, the same for every record (D28). */
export async function insertProductLogs(tx: PoolClient, logs: ProductLog[], actor: string): Promise<void> {
  if (logs.length === 0) return;
  await tx.query(
    `INSERT INTO product_update_logs
       (log_id, shop, product_id, barcode, change_type, before_data, after_data, changed_fields, change_source,
        command_id, log_seq, created_at, actor)
     SELECT log_id, shop, product_id, barcode, change_type, before_data, after_data,
            ARRAY(SELECT jsonb_array_elements_text(changed_fields)), change_source, command_id, log_seq, created_at, $2::text
       FROM jsonb_to_recordset($1::jsonb) AS x(log_id uuid, shop text, product_id uuid, barcode text,
            change_type text, before_data jsonb, after_data jsonb, changed_fields jsonb, change_source text,
            command_id uuid, log_seq integer, created_at timestamptz)`,
    [JSON.stringify(logs), actor],
  );
}
