import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CRON_SECRET, INGEST_SECRET, post, startPipeline, type TestPipeline } from '../support/pipeline.ts';

// Endpoints 1 and 2 of the spec, end to end: HTTP -> Kafka -> projector -> PostgreSQL -> reply.
// The rules case by case: packages/domain/src/products/*.unit.test.ts (the decider) and
// services/gateway/src/routes/{productItems,unknownFields}.unit.test.ts (per-item checks, D27).
let p: TestPipeline;
beforeAll(async () => {
  p = await startPipeline();
});
afterAll(async () => p?.stop());

const bulk = (shop: string, products: unknown[]) =>
  post(`${p.url()}/api/products/bulk-upsert`, { products }, { 'x-cron-secret': CRON_SECRET, 'x-shop': shop });
const ingest = (shop: string, products: unknown[]) =>
  post(`${p.url()}/api/ingest/products`, { shop, products }, { 'x-ingest-secret': INGEST_SECRET });

async function logs(shop: string, barcode: string) {
  const { rows } = await p.db.query(
    `SELECT change_type, changed_fields, before_data, after_data, change_source, command_id
       FROM agent_read.product_update_logs WHERE shop = $1 AND barcode = $2 ORDER BY created_at, command_id, log_seq`,
    [shop, barcode],
  );
  return rows;
}

describe('POST /api/products/bulk-upsert (endpoint 1)', () => {
  it('rule 2: a new product is counted in created and logged as created, with the defaults of D10', async () => {
    const r = await bulk('rule2.example', [{ barcode: '4900000000001', product_name: 'Green tea', current_price: 150 }]);
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ ok: true, created: 1, updated: 0, unchanged: 0, errors: [] });
    const { rows } = await p.db.query('SELECT * FROM agent_read.products WHERE shop = $1', ['rule2.example']);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      barcode: '4900000000001',
      product_name: 'Green tea',
      current_price: 150,
      currency: 'JPY',
      is_active: true,
    });
    const l = await logs('rule2.example', '4900000000001');
    expect(l.map((x) => x.change_type)).toEqual(['created']);
    expect(l[0].before_data).toBeNull();
    expect(l[0].change_source).toBe('/api/products/bulk-upsert');
  });

  it('rules 1, 3, 4, 5: resend is safe; price/cost and name changes are updated and logged; no change is unchanged', async () => {
    const shop = 'rules.example';
    const base = { barcode: 'B1', product_name: 'Soap', current_price: 100, current_cost: 60 };
    expect((await bulk(shop, [base])).json).toMatchObject({ created: 1 });
    expect((await bulk(shop, [base])).json).toEqual({ ok: true, created: 0, updated: 0, unchanged: 1, errors: [] });
    expect((await bulk(shop, [{ ...base, current_cost: 65 }])).json).toMatchObject({ updated: 1, unchanged: 0 });
    expect((await bulk(shop, [{ ...base, current_cost: 65, product_name: 'Soap bar' }])).json).toMatchObject({ updated: 1 });
    expect((await bulk(shop, [{ ...base, current_cost: 65, product_name: 'Soap bar' }])).json).toMatchObject({ unchanged: 1 });
    const l = await logs(shop, 'B1');
    expect(l.map((x) => x.change_type)).toEqual(['created', 'price_change', 'name_change']);
    expect(l[1].changed_fields).toEqual(['current_cost']);
    expect(l[1].before_data.current_cost).toBe(60);
    expect(l[1].after_data.current_cost).toBe(65);
    expect(l[2].changed_fields).toEqual(['product_name']);
    const { rows } = await p.db.query('SELECT count(*)::int AS n FROM public.products WHERE shop = $1', [shop]);
    expect(rows[0].n).toBe(1);
  });
});

describe('POST /api/ingest/products (endpoint 2)', () => {
  it('answers ok, the counts, errors_count and errors; shares behaviour and logs with endpoint 1 (D7)', async () => {
    const shop = 'ep2.example';
    const r = await ingest(shop, [{ barcode: 'E1', product_name: 'Rice' }, { barcode: 'E2' }]);
    expect(r.status).toBe(200);
    expect(r.json).toEqual({
      ok: true,
      created: 1,
      updated: 0,
      unchanged: 0,
      errors_count: 1,
      errors: [{ barcode: 'E2', error: 'barcode and product_name required' }],
    });
    // The same product through endpoint 1 is unchanged: one product master.
    expect((await bulk(shop, [{ barcode: 'E1', product_name: 'Rice' }])).json).toMatchObject({ unchanged: 1 });
    expect((await bulk(shop, [{ barcode: 'E1', product_name: 'Brown rice' }])).json).toMatchObject({ updated: 1 });
    const l = await logs(shop, 'E1');
    expect(l.map((x) => [x.change_type, x.change_source])).toEqual([
      ['created', '/api/ingest/products'],
      ['name_change', '/api/products/bulk-upsert'],
    ]);
  });

  it('shops are separate: the same barcode in two shops is two products', async () => {
    await ingest('shop-one.example', [{ barcode: 'SAME', product_name: 'A' }]);
    const r = await ingest('shop-two.example', [{ barcode: 'SAME', product_name: 'B' }]);
    expect(r.json.created).toBe(1);
  });
});
