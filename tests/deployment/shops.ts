// The shops the load writes to, each with a location and a level to move (what tests/faults/load.ts
// expects), set up through the Service as any client would.
import { BASE_AVAILABLE, post } from '../faults/harness.ts';
import type { Shop } from '../faults/load.ts';

export async function setupShops(port: number, n: number, say: (m: string) => void): Promise<Shop[]> {
  const tag = Date.now().toString(36);
  const shops: Shop[] = Array.from({ length: n }, (_, i) => ({
    shop: `d${i}-${tag}.deploy.example`,
    locationId: '',
    base: BASE_AVAILABLE,
  }));
  for (const s of shops) {
    const loc = await post(port, '/api/admin/locations', { shop: s.shop, locations: [{ name: 'Deploy store' }] });
    if (loc.status !== 200) throw new Error(`setup: locations for ${s.shop}: ${loc.status} ${loc.text}`);
    s.locationId = loc.body.locations[0].location_id;
    const prod = await post(port, '/api/ingest/products', {
      shop: s.shop,
      products: [{ barcode: 'INV', product_name: 'Inventory probe' }],
    });
    if (prod.status !== 200) throw new Error(`setup: product for ${s.shop}: ${prod.status} ${prod.text}`);
    const lvl = await post(port, '/api/ingest/inventory-available', {
      shop: s.shop,
      source_system: 'deploy-setup',
      mode: 'absolute',
      location_id: s.locationId,
      lines: [{ barcode: 'INV', available_qty: BASE_AVAILABLE }],
    });
    if (lvl.status !== 200) throw new Error(`setup: level for ${s.shop}: ${lvl.status} ${lvl.text}`);
  }
  say(`${shops.length} shops set up through the Service`);
  return shops;
}
