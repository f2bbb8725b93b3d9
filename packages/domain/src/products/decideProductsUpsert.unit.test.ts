import { describe, expect, it } from 'vitest';
import type { ProductsUpsertCommand } from '../commands.ts';
import { productId } from '../ids.ts';
import { decideProductsUpsert, type ProductsState } from './decideProductsUpsert.ts';
import type { Product } from './product.ts';

const T0 = '2026-11-01T00:00:00.000Z';
const T1 = '2026-11-02T00:00:00.000Z';

function command(items: ProductsUpsertCommand['payload']['items'], over: Partial<ProductsUpsertCommand> = {}): ProductsUpsertCommand {
  return {
    kind: 'products.upsert',
    command_id: '01900000-0000-7000-8000-000000000001',
    shop: 'shop.example',
    received_at: T1,
    source: { endpoint: '/api/products/bulk-upsert' },
    actor: 'platform',
    payload: { response: 'bulk_upsert', items },
    ...over,
  };
}

function stored(over: Partial<Product> = {}): Product {
  return {
    product_id: productId('shop.example', 'B'),
    shop: 'shop.example',
    barcode: 'B',
    product_name: 'Name',
    sku: 'S',
    variant_name: null,
    brand: 'Brand',
    category_l1: null,
    category_l2: null,
    category_l3: null,
    current_price: 100,
    current_cost: 50,
    currency: 'JPY',
    is_active: true,
    created_at: T0,
    updated_at: T0,
    ...over,
  };
}

const state = (...ps: Product[]): ProductsState => new Map(ps.map((p) => [p.barcode, p]));

describe('decideProductsUpsert', () => {
  it('given no product, when one is sent, then it is created with currency JPY and is_active true (D10) and logged created', () => {
    const plan = decideProductsUpsert(state(), command([{ product: { barcode: 'N', product_name: 'New' } }]));
    expect(plan.reply.body).toMatchObject({ created: 1, updated: 0, unchanged: 0 });
    expect(plan.upserts[0]).toMatchObject({ currency: 'JPY', is_active: true, created_at: T1, product_id: productId('shop.example', 'N') });
    expect(plan.logs.map((l) => l.change_type)).toEqual(['created']);
  });

  it('given a product, when the same values are sent, then it is unchanged and nothing is written', () => {
    const plan = decideProductsUpsert(state(stored()), command([{ product: { barcode: 'B', product_name: 'Name', current_price: 100 } }]));
    expect(plan.reply.body).toMatchObject({ unchanged: 1 });
    expect(plan.upserts).toEqual([]);
    expect(plan.logs).toEqual([]);
  });

  it('given a product, when price and name change, then one update and both logs (D10: both, if both changed)', () => {
    const plan = decideProductsUpsert(state(stored()), command([{ product: { barcode: 'B', product_name: 'Other', current_price: 120 } }]));
    expect(plan.reply.body).toMatchObject({ updated: 1 });
    expect(plan.logs.map((l) => [l.change_type, l.changed_fields])).toEqual([
      ['price_change', ['current_price']],
      ['name_change', ['product_name']],
    ]);
    expect(plan.logs[0]?.before_data).toMatchObject({ current_price: 100 });
    expect(plan.logs[0]?.after_data).toMatchObject({ current_price: 120 });
  });

  it('given a product, when only the cost changes, then it is a price_change', () => {
    const plan = decideProductsUpsert(state(stored()), command([{ product: { barcode: 'B', product_name: 'Name', current_cost: 55 } }]));
    expect(plan.logs.map((l) => l.change_type)).toEqual(['price_change']);
  });

  it('given a product, when an optional field is omitted, then it keeps its value; when null, then it is cleared (D10)', () => {
    const plan = decideProductsUpsert(state(stored()), command([{ product: { barcode: 'B', product_name: 'Name', brand: null } }]));
    expect(plan.upserts[0]).toMatchObject({ brand: null, sku: 'S', current_price: 100 });
    expect(plan.logs.map((l) => [l.change_type, l.changed_fields])).toEqual([['attribute_change', ['brand']]]);
  });

  it('given an active product, when it is deactivated, then it is updated and audited as attribute_change', () => {
    const plan = decideProductsUpsert(state(stored()), command([{ product: { barcode: 'B', product_name: 'Name', is_active: false } }]));
    expect(plan.reply.body).toMatchObject({ updated: 1 });
    expect(plan.logs[0]).toMatchObject({ change_type: 'attribute_change', changed_fields: ['is_active'] });
  });

  it('given an existing product with another currency, when currency is omitted, then the create-only default does not apply', () => {
    const plan = decideProductsUpsert(state(stored({ currency: 'USD' })), command([{ product: { barcode: 'B', product_name: 'Name' } }]));
    expect(plan.reply.body).toMatchObject({ unchanged: 1 });
  });

  it('given rejected items, then they are listed in errors in request order and the others apply', () => {
    const plan = decideProductsUpsert(
      state(),
      command([
        { rejected: { barcode: 'X', error: 'barcode and product_name required' } },
        { product: { barcode: 'N', product_name: 'New' } },
        { rejected: { barcode: '', error: 'barcode and product_name required' } },
      ]),
    );
    expect(plan.reply.body).toEqual({
      ok: true,
      created: 1,
      updated: 0,
      unchanged: 0,
      errors: [
        { barcode: 'X', error: 'barcode and product_name required' },
        { barcode: '', error: 'barcode and product_name required' },
      ],
    });
  });

  it('endpoint 2 answers with ok and errors_count (D7)', () => {
    const cmd = command([{ rejected: { barcode: 'X', error: 'e' } }]);
    const plan = decideProductsUpsert(state(), { ...cmd, payload: { ...cmd.payload, response: 'ingest' } });
    expect(plan.reply.body).toEqual({
      ok: true,
      created: 0,
      updated: 0,
      unchanged: 0,
      errors_count: 1,
      errors: [{ barcode: 'X', error: 'e' }],
    });
  });

  it('D6a: a barcode repeated in one batch is created, then updated, then unchanged; one row holds the final state', () => {
    const plan = decideProductsUpsert(
      state(),
      command([
        { product: { barcode: 'R', product_name: 'A', current_price: 1 } },
        { product: { barcode: 'R', product_name: 'A', current_price: 2 } },
        { product: { barcode: 'R', product_name: 'A', current_price: 2 } },
      ]),
    );
    expect(plan.reply.body).toMatchObject({ created: 1, updated: 1, unchanged: 1 });
    expect(plan.upserts).toHaveLength(1);
    expect(plan.upserts[0]?.current_price).toBe(2);
    expect(plan.logs.map((l) => l.change_type)).toEqual(['created', 'price_change']);
  });

  it('D3: log ids are derived from the command, so deciding twice gives identical plans', () => {
    const cmd = command([{ product: { barcode: 'N', product_name: 'New' } }]);
    expect(decideProductsUpsert(state(), cmd)).toEqual(decideProductsUpsert(state(), cmd));
    expect(
      new Set(
        decideProductsUpsert(
          state(stored()),
          command([{ product: { barcode: 'B', product_name: 'X', current_price: 1, brand: 'Z' } }]),
        ).logs.map((l) => l.log_id),
      ).size,
    ).toBe(3);
  });
});
