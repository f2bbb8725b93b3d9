import { describe, expect, it } from 'vitest';
import { postJson, TEST_CRON_SECRET, TEST_INGEST_SECRET, useTestGateway } from '../../testing/testGateway.ts';

// Endpoints 1 and 2 check each product item alone at the HTTP edge (buildApp, in-memory ports): a bad
// item is carried in the command as `rejected` with the spec's error text, the others go on as
// `product` (rule 6, D7). decideProductsUpsert.unit.test.ts shows how the decider answers those
// (errors in request order, errors_count on endpoint 2). Moved here from
// tests/integration/products.int.test.ts (none of this needs a broker or database).
const gw = useTestGateway();

async function post(path: string, body: unknown, headers: Record<string, string>) {
  const { status, json } = await postJson(`${gw.url}${path}`, body, headers);
  return { status, json: json as Record<string, unknown> };
}
const bulk = (products: unknown[]) =>
  post('/api/products/bulk-upsert', { products }, { 'x-cron-secret': TEST_CRON_SECRET, 'x-shop': 'items.example' });
const ingest = (body: Record<string, unknown>) => post('/api/ingest/products', body, { 'x-ingest-secret': TEST_INGEST_SECRET });
const items = () => (gw.appended[0]?.payload as { items: unknown[] }).items;

describe('per-item checks of endpoints 1 and 2', () => {
  it('rule 6: an item missing barcode or product_name is rejected and does not stop the others', async () => {
    const r = await bulk([
      { barcode: 'OK1', product_name: 'Fine' },
      { barcode: 'NO-NAME' },
      { product_name: 'No barcode' },
      { barcode: 'OK2', product_name: 'Also fine' },
    ]);
    expect(r.status).toBe(202);
    expect(items()).toEqual([
      { product: { barcode: 'OK1', product_name: 'Fine' } },
      { rejected: { barcode: 'NO-NAME', error: 'barcode and product_name required' } },
      { rejected: { barcode: '', error: 'barcode and product_name required' } },
      { product: { barcode: 'OK2', product_name: 'Also fine' } },
    ]);
  });

  it('a wrongly typed field fails only its item, with a message naming the field', async () => {
    await bulk([
      { barcode: 'T1', product_name: 'Ok' },
      { barcode: 'T2', product_name: 'Bad', current_price: 'cheap' },
    ]);
    expect(items()).toEqual([
      { product: { barcode: 'T1', product_name: 'Ok' } },
      { rejected: { barcode: 'T2', error: 'current_price must be number or null' } },
    ]);
  });

  it('a barcode sent as a number is reported by type, not silently converted (leading zeros would be lost)', async () => {
    await ingest({
      shop: 'items.example',
      products: [
        { barcode: 49012345, product_name: 'N' },
        { barcode: 'S1', product_name: 'S' },
      ],
    });
    expect(items()).toEqual([
      { rejected: { barcode: '49012345', error: 'barcode must be string' } },
      { product: { barcode: 'S1', product_name: 'S' } },
    ]);
  });

  it('D27: an unknown top-level field (dry_run in the body) refuses the request with 400 `<field> is not allowed`, nothing appended', async () => {
    const r = await ingest({ shop: 'items.example', products: [{ barcode: 'T', product_name: 'N' }], dry_run: true });
    expect([r.status, r.json]).toEqual([400, { ok: false, error: 'dry_run is not allowed' }]);
    expect(gw.appended).toEqual([]);
  });
});
