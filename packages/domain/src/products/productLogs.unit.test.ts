import { describe, expect, it } from 'vitest';
import type { ProductsUpsertCommand } from '../commands.ts';
import { productId } from '../ids.ts';
import { decideProductsUpsert, type ProductsState } from './decideProductsUpsert.ts';
import type { Product } from './product.ts';

// D10 at its edges: what a `created` log lists, a stored null that gets a value, a field left
// undefined (omitted, so kept), and the identity every log's before/after data carries.

const SHOP = 'shop.example';
const T0 = '2026-11-01T00:00:00.000Z';
const T1 = '2026-11-02T00:00:00.000Z';
const command = (items: ProductsUpsertCommand['payload']['items']): ProductsUpsertCommand => ({
  kind: 'products.upsert',
  command_id: '01900000-0000-7000-8000-000000000001',
  shop: SHOP,
  received_at: T1,
  source: { endpoint: '/api/products/bulk-upsert' },
  actor: 'platform',
  payload: { response: 'bulk_upsert', items },
});
const stored = (over: Partial<Product> = {}): Product => ({
  product_id: productId(SHOP, 'B'),
  shop: SHOP,
  barcode: 'B',
  product_name: 'Name',
  sku: 'S',
  variant_name: null,
  brand: null,
  category_l1: null,
  category_l2: null,
  category_l3: null,
  current_price: 100,
  current_cost: null,
  currency: 'JPY',
  is_active: true,
  created_at: T0,
  updated_at: T0,
  ...over,
});
const state = (...ps: Product[]): ProductsState => new Map(ps.map((p) => [p.barcode, p]));

describe('decideProductsUpsert: logs (D10)', () => {
  it('a created log lists the fields the new product has a value for, the create-only defaults included', () => {
    const plan = decideProductsUpsert(
      state(),
      command([{ product: { barcode: 'N', product_name: 'New', sku: 'S-1', current_cost: null } }]),
    );
    expect(plan.logs.map((l) => [l.change_type, l.changed_fields])).toEqual([
      ['created', ['product_name', 'sku', 'currency', 'is_active']],
    ]);
  });

  it('before_data and after_data carry the product id, shop and barcode beside the fields', () => {
    const created = decideProductsUpsert(state(), command([{ product: { barcode: 'N', product_name: 'New' } }]));
    expect(created.logs[0]?.after_data).toMatchObject({ product_id: productId(SHOP, 'N'), shop: SHOP, barcode: 'N', product_name: 'New' });
    const updated = decideProductsUpsert(state(stored()), command([{ product: { barcode: 'B', product_name: 'Renamed' } }]));
    const identity = { product_id: productId(SHOP, 'B'), shop: SHOP, barcode: 'B' };
    expect(updated.logs[0]?.before_data).toMatchObject({ ...identity, product_name: 'Name' });
    expect(updated.logs[0]?.after_data).toMatchObject({ ...identity, product_name: 'Renamed' });
  });

  it('a field stored as null that is sent with a value is a change: updated and logged', () => {
    const plan = decideProductsUpsert(
      state(stored()),
      command([{ product: { barcode: 'B', product_name: 'Name', brand: 'Acme', current_cost: 60 } }]),
    );
    expect(plan.reply.body).toMatchObject({ created: 0, updated: 1, unchanged: 0 });
    expect(plan.upserts[0]).toMatchObject({ brand: 'Acme', current_cost: 60 });
    expect(plan.logs.map((l) => [l.change_type, l.changed_fields])).toEqual([
      ['price_change', ['current_cost']],
      ['attribute_change', ['brand']],
    ]);
  });

  it('a field present but undefined is omitted: the stored value is kept and nothing changes', () => {
    const plan = decideProductsUpsert(state(stored()), command([{ product: { barcode: 'B', product_name: 'Name', sku: undefined } }]));
    expect(plan.reply.body).toMatchObject({ updated: 0, unchanged: 1 });
    expect(plan.upserts).toEqual([]);
  });
});
