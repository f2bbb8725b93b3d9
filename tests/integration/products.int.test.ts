import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CRON_SECRET, INGEST_SECRET, post, startPipeline, type TestPipeline } from '../support/pipeline.ts';

// Endpoints 1 and 2 of the spec, end to end: HTTP -> Kafka -> projector -> PostgreSQL -> reply.
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

  it('rule 6: an item missing barcode or product_name is reported and does not stop the others', async () => {
    const r = await bulk('rule6.example', [
      { barcode: 'OK1', product_name: 'Fine' },
      { barcode: 'NO-NAME' },
      { product_name: 'No barcode' },
      { barcode: 'OK2', product_name: 'Also fine' },
    ]);
    expect(r.status).toBe(200);
    expect(r.json.created).toBe(2);
    expect(r.json.errors).toEqual([
      { barcode: 'NO-NAME', error: 'barcode and product_name required' },
      { barcode: '', error: 'barcode and product_name required' },
    ]);
  });

  it('D10: omitted fields keep their value, null clears, other fields log attribute_change (deactivation audited)', async () => {
    const shop = 'd10.example';
    await bulk(shop, [{ barcode: 'X', product_name: 'Cup', brand: 'Acme', sku: 'S-1', current_price: 10 }]);
    expect((await bulk(shop, [{ barcode: 'X', product_name: 'Cup' }])).json).toMatchObject({ unchanged: 1 });
    expect((await bulk(shop, [{ barcode: 'X', product_name: 'Cup', brand: null, is_active: false }])).json).toMatchObject({ updated: 1 });
    const { rows } = await p.db.query('SELECT brand, sku, current_price, is_active FROM public.products WHERE shop = $1', [shop]);
    expect(rows[0]).toEqual({ brand: null, sku: 'S-1', current_price: 10, is_active: false });
    const l = await logs(shop, 'X');
    expect(l.map((x) => x.change_type)).toEqual(['created', 'attribute_change']);
    expect(l[1].changed_fields).toEqual(['brand', 'is_active']);
  });

  it('D6a: a barcode repeated in one batch is created, then updated, and counted and logged as such', async () => {
    const r = await bulk('d6a.example', [
      { barcode: 'R', product_name: 'One', current_price: 1 },
      { barcode: 'R', product_name: 'One', current_price: 2 },
      { barcode: 'R', product_name: 'One', current_price: 2 },
    ]);
    expect(r.json).toMatchObject({ created: 1, updated: 1, unchanged: 1 });
    expect((await logs('d6a.example', 'R')).map((x) => x.change_type)).toEqual(['created', 'price_change']);
  });

  it('a wrongly typed field fails only its item, with a message naming the field', async () => {
    const r = await bulk('types.example', [
      { barcode: 'T1', product_name: 'Ok' },
      { barcode: 'T2', product_name: 'Bad', current_price: 'cheap' },
    ]);
    expect(r.json.created).toBe(1);
    expect(r.json.errors).toEqual([{ barcode: 'T2', error: 'current_price must be number or null' }]);
  });
});

describe('D27: unknown fields are refused, never dropped', () => {
  it('an item with an unknown field is reported with unknown_field naming it, the others are applied (both endpoints), and nothing of it is stored', async () => {
    const items = [
      { barcode: 'U1', product_name: 'Fine' },
      { barcode: 'U2', product_name: 'Typo', curent_price: 99 },
      { barcode: 'U3', product_name: 'Also fine' },
    ];
    const unknown = { barcode: 'U2', error: 'unknown_field: curent_price is not allowed' };
    const b = await bulk('d27-bulk.example', items);
    expect(b.status).toBe(200);
    expect(b.json).toEqual({ ok: true, created: 2, updated: 0, unchanged: 0, errors: [unknown] });
    const i = await ingest('d27-ingest.example', items);
    expect(i.json).toEqual({ ok: true, created: 2, updated: 0, unchanged: 0, errors_count: 1, errors: [unknown] });
    const { rows } = await p.db.query('SELECT barcode FROM public.products WHERE shop = ANY($1) ORDER BY shop, barcode', [
      ['d27-bulk.example', 'd27-ingest.example'],
    ]);
    expect(rows.map((r) => r.barcode)).toEqual(['U1', 'U3', 'U1', 'U3']);
  });

  it('an unknown top-level field refuses the request with 400 `<field> is not allowed`', async () => {
    const r = await post(
      `${p.url()}/api/ingest/products`,
      { shop: 'd27-top.example', products: [{ barcode: 'T', product_name: 'N' }], dry_run: true },
      { 'x-ingest-secret': INGEST_SECRET },
    );
    expect([r.status, r.json]).toEqual([400, { ok: false, error: 'dry_run is not allowed' }]);
    const { rows } = await p.db.query('SELECT 1 FROM public.products WHERE shop = $1', ['d27-top.example']);
    expect(rows).toEqual([]);
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

describe('per-item types', () => {
  it('a barcode sent as a number is reported by type, not silently converted (leading zeros would be lost)', async () => {
    const r = await post(
      `${p.url()}/api/ingest/products`,
      {
        shop: 'num.example',
        products: [
          { barcode: 49012345, product_name: 'N' },
          { barcode: 'S1', product_name: 'S' },
        ],
      },
      { 'x-ingest-secret': INGEST_SECRET },
    );
    expect(r.json).toMatchObject({ created: 1, errors_count: 1, errors: [{ barcode: '49012345', error: 'barcode must be string' }] });
  });
});
