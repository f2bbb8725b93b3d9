// The shops the load writes to, set up through the Service as any client would (tests/faults' setup).
import { setupShops as setupVia } from '../faults/setupShops.ts';
import type { Shop } from '../faults/load.ts';

export async function setupShops(port: number, n: number, say: (m: string) => void): Promise<Shop[]> {
  const tag = Date.now().toString(36);
  const shops = await setupVia(
    port,
    Array.from({ length: n }, (_, i) => `d${i}-${tag}.deploy.example`),
  );
  say(`${shops.length} shops set up through the Service`);
  return shops;
}
