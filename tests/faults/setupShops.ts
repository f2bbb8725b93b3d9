// The shops a load writes to, set up through a gateway as any client would: a location each, the
// product INV and its level at BASE_AVAILABLE (what load.ts's inventory deltas move and verify.ts sums).
import { BASE_AVAILABLE, post } from './client.ts';
import type { Shop } from './load.ts';

export async function setupShops(port: number, names: string[]): Promise<Shop[]> {
  const shops: Shop[] = names.map((shop) => ({ shop, locationId: '', base: BASE_AVAILABLE }));
  await Promise.all(
    shops.map(async (s) => {
      const loc = await post(port, '/api/admin/locations', { shop: s.shop, locations: [{ name: 'Load store' }] });
      if (loc.status !== 200) throw new Error(`setup: locations for ${s.shop}: ${loc.status} ${loc.text}`);
      s.locationId = loc.body.locations[0].location_id;
      const prod = await post(port, '/api/ingest/products', {
        shop: s.shop,
        products: [{ barcode: 'INV', product_name: 'Inventory probe' }],
      });
      if (prod.status !== 200) throw new Error(`setup: product for ${s.shop}: ${prod.status} ${prod.text}`);
      const lvl = await post(port, '/api/ingest/inventory-available', {
        shop: s.shop,
        source_system: 'load-setup',
        mode: 'absolute',
        location_id: s.locationId,
        lines: [{ barcode: 'INV', available_qty: BASE_AVAILABLE }],
      });
      if (lvl.status !== 200) throw new Error(`setup: level for ${s.shop}: ${lvl.status} ${lvl.text}`);
    }),
  );
  return shops;
}
