import { describe, expect, it } from 'vitest';
import type { ProductsUpsertCommand } from '../commands.ts';
import { decideProductsUpsert, type ProductsState } from './decideProductsUpsert.ts';

// Endpoints 1 and 2 through one decider (D7, D10), with the items the gateway builds (rule 6, D27:
// services/gateway/src/routes/productItems.unit.test.ts and unknownFields.unit.test.ts). Moved here from
// tests/integration/products.int.test.ts (a decider needs no database), which keeps the create and
// update paths end to end.
const T1 = '2026-11-02T00:00:00.000Z';
const T2 = '2026-11-03T00:00:00.000Z';
type Items = ProductsUpsertCommand['payload']['items'];

function command(items: Items, endpoint: '/api/products/bulk-upsert' | '/api/ingest/products', at = T1): ProductsUpsertCommand {
  return {
    kind: 'products.upsert',
    command_id: `01900000-0000-7000-8000-00000000000${at === T1 ? 1 : 2}`,
    shop: 'shop.example',
    received_at: at,
    source: { endpoint },
    actor: 'platform',
    payload: { response: endpoint === '/api/ingest/products' ? 'ingest' : 'bulk_upsert', items },
  };
}

/** The state after a plan: its upserts over the given products. */
const after = (s: ProductsState, upserts: ReturnType<typeof decideProductsUpsert>['upserts']): ProductsState =>
  new Map([...s, ...upserts.map((p) => [p.barcode, p] as const)]);

describe('one product master for endpoints 1 and 2 (D7, D10)', () => {
  it('D10: omitted fields keep their value, null clears, and brand and is_active changed together are one attribute_change', () => {
    let s: ProductsState = new Map();
    const created = decideProductsUpsert(
      s,
      command(
        [{ product: { barcode: 'X', product_name: 'Cup', brand: 'Acme', sku: 'S-1', current_price: 10 } }],
        '/api/products/bulk-upsert',
      ),
    );
    s = after(s, created.upserts);
    const omitted = decideProductsUpsert(s, command([{ product: { barcode: 'X', product_name: 'Cup' } }], '/api/products/bulk-upsert', T2));
    expect(omitted.reply.body).toMatchObject({ unchanged: 1 });
    const cleared = decideProductsUpsert(
      s,
      command([{ product: { barcode: 'X', product_name: 'Cup', brand: null, is_active: false } }], '/api/products/bulk-upsert', T2),
    );
    expect(cleared.reply.body).toMatchObject({ updated: 1 });
    expect(cleared.upserts[0]).toMatchObject({ brand: null, sku: 'S-1', current_price: 10, is_active: false });
    expect(cleared.logs.map((l) => [l.change_type, l.changed_fields])).toEqual([['attribute_change', ['brand', 'is_active']]]);
  });

  it('D7: a product created through endpoint 2 is unchanged when endpoint 1 sends the same; each log names its endpoint', () => {
    let s: ProductsState = new Map();
    const viaIngest = decideProductsUpsert(
      s,
      command(
        [{ product: { barcode: 'E1', product_name: 'Rice' } }, { rejected: { barcode: 'E2', error: 'barcode and product_name required' } }],
        '/api/ingest/products',
      ),
    );
    expect(viaIngest.reply.body).toEqual({
      ok: true,
      created: 1,
      updated: 0,
      unchanged: 0,
      errors_count: 1,
      errors: [{ barcode: 'E2', error: 'barcode and product_name required' }],
    });
    s = after(s, viaIngest.upserts);
    expect(
      decideProductsUpsert(s, command([{ product: { barcode: 'E1', product_name: 'Rice' } }], '/api/products/bulk-upsert', T2)).reply.body,
    ).toMatchObject({ unchanged: 1 });
    const renamed = decideProductsUpsert(
      s,
      command([{ product: { barcode: 'E1', product_name: 'Brown rice' } }], '/api/products/bulk-upsert', T2),
    );
    expect([...viaIngest.logs, ...renamed.logs].map((l) => [l.change_type, l.change_source])).toEqual([
      ['created', '/api/ingest/products'],
      ['name_change', '/api/products/bulk-upsert'],
    ]);
  });

  it('D27 and rule 6: rejected items (unknown field, missing name) are listed in errors and not written; the others are', () => {
    const plan = decideProductsUpsert(
      new Map(),
      command(
        [
          { product: { barcode: 'U1', product_name: 'Fine' } },
          { rejected: { barcode: 'U2', error: 'unknown_field: curent_price is not allowed' } },
          { product: { barcode: 'U3', product_name: 'Also fine' } },
        ],
        '/api/products/bulk-upsert',
      ),
    );
    expect(plan.reply.body).toEqual({
      ok: true,
      created: 2,
      updated: 0,
      unchanged: 0,
      errors: [{ barcode: 'U2', error: 'unknown_field: curent_price is not allowed' }],
    });
    expect(plan.upserts.map((p) => p.barcode)).toEqual(['U1', 'U3']);
  });
});
