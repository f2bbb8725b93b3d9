// The soak's requests, one builder per kind: every endpoint of docs/api.md, as a shop's systems send
// them. The writes the fault suite can check (products, bulk, async, delta) carry unique barcodes or
// idempotency keys; the others write to a small catalogue of their own, never to the level INV whose
// quantity verify.ts sums.
import { validOrderRow } from '@ingest/domain/testing';
import { CRON_SECRET, INGEST_SECRET, type Shop } from '../../tests/faults/load.ts';
import type { Request } from './client.ts';

/** A load shop plus what the non-checked endpoints write to. */
export interface SoakShop extends Shop {
  channelId: string;
  catalogue: string[];
}

export type Kind = 'products' | 'async' | 'bulk' | 'delta' | 'snapshot' | 'levels' | 'orders' | 'dry' | 'idem';

/** 20 requests of one shop, in turn: mostly products and deltas, every other endpoint among them. */
export const MIX: readonly Kind[] = [
  'products', 'products', 'delta', 'async', 'products', 'bulk', 'delta', 'snapshot', 'products', 'idem',
  'delta', 'orders', 'async', 'levels', 'products', 'delta', 'bulk', 'dry', 'products', 'orders',
]; // prettier-ignore

export const CATALOGUE_SIZE = 20;
const ingest = { 'x-ingest-secret': INGEST_SECRET };

export const productsRequest = (s: SoakShop, barcodes: string[], async = false, query = ''): Request => ({
  method: 'POST',
  path: `/api/ingest/products${query}`,
  headers: async ? { ...ingest, prefer: 'respond-async' } : ingest,
  body: {
    shop: s.shop,
    products: barcodes.map((barcode, i) => ({ barcode, product_name: `Soak item ${barcode}`, current_price: 100 + i })),
  },
});

export const bulkRequest = (s: SoakShop, barcode: string): Request => ({
  method: 'POST',
  path: '/api/products/bulk-upsert',
  headers: { 'x-cron-secret': CRON_SECRET, 'x-shop': s.shop },
  body: { products: [{ barcode, product_name: `Soak bulk item ${barcode}`, brand: 'soak' }] },
});

export const deltaRequest = (s: SoakShop, key: string, delta: number, query = ''): Request => ({
  method: 'POST',
  path: `/api/ingest/inventory-available${query}`,
  headers: ingest,
  body: {
    shop: s.shop,
    source_system: 'soak-pos',
    mode: 'delta',
    location_id: s.locationId,
    idempotency_key: key,
    lines: [{ barcode: 'INV', available_delta: delta }],
  },
});

/** Absolute stock of the catalogue at the shop's location; some lines go to 0 (stock_zero events). */
export const snapshotRequest = (s: SoakShop, n: number): Request => ({
  method: 'POST',
  path: '/api/ingest/inventory-snapshot',
  headers: ingest,
  body: {
    shop: s.shop,
    source_system: 'soak-wms',
    location_id: s.locationId,
    lines: s.catalogue.slice(0, 10).map((barcode, k) => ({ barcode, on_hand_qty: (n + k) % 7, available_qty: (n * k) % 5 })),
  },
});

export const levelsRequest = (s: SoakShop, n: number): Request => ({
  method: 'POST',
  path: '/api/inventory-levels/bulk-upsert',
  headers: ingest,
  body: {
    shop: s.shop,
    source_system: 'soak-oms',
    mode: 'absolute',
    lines: s.catalogue
      .slice(10)
      .map((barcode, k) => ({ barcode, location_id: s.locationId, on_hand_qty: (n + k) % 9, available_qty: (n + k) % 4 })),
  },
});

/** Two order lines of a transaction of its own (`transactionId` unique per request). */
export const ordersRequest = (s: SoakShop, transactionId: string): Request => ({
  method: 'POST',
  path: '/api/order-line-master/bulk-upsert',
  headers: ingest,
  body: {
    shop: s.shop,
    change_source: 'soak',
    rows: [1, 2].map((line) =>
      validOrderRow(
        { barcode: s.catalogue[line]!, channel_id: s.channelId, location_id: s.locationId },
        { transaction_id: transactionId, transaction_line_id: String(line), ordered_at: new Date().toISOString() },
      ),
    ),
  },
});

/** The rarer calls, one every few seconds in turn across the shops: registry, the daily job by hand, the operator's list. */
export function adminRequest(s: SoakShop, n: number): Request {
  switch (n % 4) {
    case 0: // the same location renamed: registered again, never a new row
      return {
        method: 'POST',
        path: '/api/admin/locations',
        headers: ingest,
        body: { shop: s.shop, locations: [{ location_id: s.locationId, name: `Load store ${n}` }] },
      };
    case 1:
      return {
        method: 'POST',
        path: '/api/admin/channels',
        headers: ingest,
        body: { shop: s.shop, channels: [{ channel_id: s.channelId, name: `Web ${n}` }] },
      };
    case 2: // yesterday's copy by hand: the first one writes, the others answer already_done
      return { method: 'POST', path: '/api/admin/daily-snapshot', headers: ingest, body: { shop: s.shop } };
    default:
      return { method: 'GET', path: `/api/admin/commands?shop=${encodeURIComponent(s.shop)}&limit=20`, headers: ingest };
  }
}

export const commandRequest = (id: string): Request => ({ method: 'GET', path: `/api/commands/${id}`, headers: ingest });
