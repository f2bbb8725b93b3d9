import { afterEach, describe, expect, it } from 'vitest';
import { startTestGateway, TEST_INGEST_SECRET, type TestGateway } from '../../testing/testGateway.ts';

// The body path of body.ts (one Buffer, decoded once, one JSON.parse) reads what body-parser's JSON
// reader read before it, and refuses what it refused, with the same statuses.
const gateways: TestGateway[] = [];
afterEach(async () => {
  await Promise.all(gateways.splice(0).map((g) => g.close()));
});
async function send(body: string | Buffer, contentType = 'application/json') {
  const gw = await startTestGateway();
  gateways.push(gw);
  const r = await fetch(`${gw.url}/api/ingest/products`, {
    method: 'POST',
    headers: { 'x-ingest-secret': TEST_INGEST_SECRET, 'content-type': contentType },
    body,
  });
  return { status: r.status, appended: gw.appended.length };
}
const products = JSON.stringify({ shop: 'a.example', products: [{ barcode: 'B', product_name: 'Tea', current_price: 120 }] });

describe('reading a JSON body', () => {
  it('a UTF-8 body with a byte-order mark is read as without one', async () => {
    expect(await send(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(products)]))).toMatchObject({ status: 202, appended: 1 });
  });

  it('a charset named with quotes or in capitals is read', async () => {
    expect((await send(products, 'application/json; charset="UTF-8"')).status).toBe(202);
  });

  it('a charset that is no UTF-* is 415 (`utf8` without the dash included, as body-parser had it)', async () => {
    for (const charset of ['latin1', 'utf8'])
      expect(await send(products, `application/json; charset=${charset}`)).toMatchObject({ status: 415, appended: 0 });
  });

  it('an empty body, a root other than an object, or no JSON at all is 400 invalid_json', async () => {
    for (const body of ['', '[]', '"x"', 'null', '{"shop":', ' '])
      expect(await send(body), JSON.stringify(body)).toMatchObject({ status: 400, appended: 0 });
  });

  it('a body over 64 KiB (parsed in a turn of its own) is answered like a small one', async () => {
    const many = Array.from({ length: 2000 }, (_, i) => ({ barcode: `B${i}`, product_name: 'Tea '.repeat(20), current_price: i }));
    const body = JSON.stringify({ shop: 'a.example', products: many });
    expect(body.length).toBeGreaterThan(64 * 1024);
    expect(await send(body)).toMatchObject({ status: 202, appended: 1 });
  });
});
