import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ProductInput } from '@ingest/contracts/types';
import type { ProductsUpsertCommand } from '../commands.ts';
import { decideProductsUpsert, type ProductLog } from './decideProductsUpsert.ts';
import type { Product } from './product.ts';

// D6a: a batch gives the same rows, counts and logs as its items sent one by one.
const barcode = fc.constantFrom('A', 'B', 'C');
const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });
const item: fc.Arbitrary<ProductsUpsertCommand['payload']['items'][number]> = fc.oneof(
  fc
    .record({
      barcode,
      product_name: fc.constantFrom('x', 'y'),
      brand: maybe(fc.constantFrom('b1', 'b2', null)),
      current_price: maybe(fc.constantFrom(1, 2, 2.5, null)),
      current_cost: maybe(fc.constantFrom(1, 3, null)),
      currency: maybe(fc.constantFrom('JPY', 'USD', null)),
      is_active: maybe(fc.boolean()),
    })
    .map((r) => ({ product: Object.fromEntries(Object.entries(r).filter(([, v]) => v !== undefined)) as unknown as ProductInput })),
  fc.record({ rejected: fc.record({ barcode, error: fc.constant('barcode and product_name required') }) }),
);

const AT = '2026-11-01T00:00:00.000Z';
const cmd = (id: string, items: ProductsUpsertCommand['payload']['items']): ProductsUpsertCommand => ({
  kind: 'products.upsert',
  command_id: id,
  shop: 's.example',
  received_at: AT,
  source: { endpoint: '/api/ingest/products' },
  actor: 'platform',
  payload: { response: 'bulk_upsert', items },
});
const withoutIds = (logs: ProductLog[]) => logs.map(({ log_id: _l, command_id: _c, log_seq: _s, ...rest }) => rest);

describe('decideProductsUpsert, D6a property', () => {
  it('a batch equals its items applied one by one', () => {
    fc.assert(
      fc.property(fc.array(item, { maxLength: 12 }), (items) => {
        const batch = decideProductsUpsert(new Map(), cmd('00000000-0000-7000-8000-000000000000', items));

        let state = new Map<string, Product>();
        const logs: ProductLog[] = [];
        const totals = { created: 0, updated: 0, unchanged: 0 };
        const errors: unknown[] = [];
        items.forEach((it, i) => {
          const one = decideProductsUpsert(state, cmd(`00000000-0000-7000-8000-${String(i + 1).padStart(12, '0')}`, [it]));
          state = new Map(state);
          for (const p of one.upserts) state.set(p.barcode, p);
          logs.push(...one.logs);
          const b = one.reply.body as typeof totals & { errors: unknown[] };
          totals.created += b.created;
          totals.updated += b.updated;
          totals.unchanged += b.unchanged;
          errors.push(...b.errors);
        });

        expect(batch.reply.body).toEqual({ ok: true, ...totals, errors });
        expect(withoutIds(batch.logs)).toEqual(withoutIds(logs));
        const sortByBarcode = (ps: Product[]) => [...ps].sort((a, b) => a.barcode.localeCompare(b.barcode));
        expect(sortByBarcode(batch.upserts)).toEqual(sortByBarcode([...state.values()]));
      }),
      { numRuns: 500 },
    );
  });
});
