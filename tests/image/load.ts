// Open-loop load on one gateway container at a time (requests leave at a fixed rate whatever the
// answers), recorded in the fault suite's `Sent` shape so that its verify() can compare every answer
// with the database. Every write is checkable: a unique barcode per product, a unique idempotency key
// per inventory delta (tests/faults/load.ts has the same mix, on keep-alive sockets).
import type { RequestKind, Sent, Shop } from '../faults/load.ts';
import { send } from './http.ts';

export interface Target {
  name: string;
  port: number;
}

export interface Load {
  /** Every request, those refused at connect (error ECONNREFUSED: never reached a server) included. */
  records: Sent[];
  setTarget(t: Target): void;
  /** Stops sending; resolves when every request sent has an answer or has timed out. */
  stop(): Promise<void>;
  /** Requests sent and not answered yet at `at`. */
  inFlightAt(at: number): number;
}

const KINDS: Array<RequestKind | 'large'> = ['products', 'delta', 'bulk', 'large', 'async', 'delta'];
// Requests that take the projector a while, so that a SIGTERM meets some still waiting for their reply.
const LARGE_ITEMS = 300;

export function startLoad(opts: {
  tag: string;
  shops: Shop[];
  ratePerSec: number;
  target: Target;
  ingestSecret: string;
  cronSecret: string;
}): Load {
  const records: Sent[] = [];
  const pending = new Set<Promise<void>>();
  let target = opts.target;
  let n = 0;

  const fire = (): void => {
    n += 1;
    const pick = KINDS[n % KINDS.length]!;
    const kind: RequestKind = pick === 'large' ? 'products' : pick;
    const shop = opts.shops[n % opts.shops.length]!;
    const ingest = { 'x-ingest-secret': opts.ingestSecret };
    const rec: Sent = {
      seq: n,
      kind,
      shop: shop.shop,
      gateway: target.name,
      path: '',
      sentAt: Date.now(),
      endAt: null,
      status: null,
      retryAfter: null,
      body: null,
      text: '',
      error: null,
      barcodes: [],
      key: null,
      delta: 0,
      commandId: null,
    };
    let headers: Record<string, string> = ingest;
    let body: unknown;
    if (kind === 'delta') {
      rec.path = '/api/ingest/inventory-available';
      rec.key = `${opts.tag}-${n}`;
      rec.delta = (n % 9) + 1; // never clamps (the base is large), so the level adds up exactly
      body = {
        shop: shop.shop,
        source_system: 'image-test',
        mode: 'delta',
        location_id: shop.locationId,
        idempotency_key: rec.key,
        lines: [{ barcode: 'INV', available_delta: rec.delta }],
      };
    } else if (kind === 'bulk') {
      rec.path = '/api/products/bulk-upsert';
      rec.barcodes = [`${opts.tag}-${n}-c`];
      headers = { 'x-cron-secret': opts.cronSecret, 'x-shop': shop.shop };
      body = { products: rec.barcodes.map((barcode) => ({ barcode, product_name: `Image test bulk item ${n}` })) };
    } else {
      rec.path = '/api/ingest/products';
      const items = pick === 'large' ? LARGE_ITEMS : (n % 3) + 1;
      rec.barcodes = Array.from({ length: items }, (_, i) => `${opts.tag}-${n}-${i}`);
      if (kind === 'async') headers = { ...ingest, prefer: 'respond-async' };
      body = {
        shop: shop.shop,
        products: rec.barcodes.map((barcode, i) => ({ barcode, product_name: `Image test item ${n}`, current_price: 100 + i })),
      };
    }
    records.push(rec);
    const p = send(target.port, 'POST', rec.path, headers, body).then((a) => {
      rec.endAt = Date.now();
      rec.status = a.status;
      rec.error = a.error;
      rec.text = a.text.slice(0, 2000);
      rec.body = a.body;
      const ra = a.headers['retry-after'];
      rec.retryAfter = Array.isArray(ra) ? (ra[0] ?? null) : (ra ?? null);
      if (a.status === 202 && typeof a.body?.command_id === 'string') rec.commandId = a.body.command_id;
    });
    pending.add(p);
    void p.finally(() => pending.delete(p));
  };

  const started = Date.now();
  let scheduled = 0;
  const timer = setInterval(
    () => {
      const due = Math.floor(((Date.now() - started) * opts.ratePerSec) / 1000);
      for (; scheduled < due; scheduled++) fire();
    },
    Math.max(5, Math.floor(500 / opts.ratePerSec)),
  );

  return {
    records,
    setTarget: (t) => void (target = t),
    stop: async () => {
      clearInterval(timer);
      while (pending.size > 0) await Promise.race(pending);
    },
    inFlightAt: (at) => records.filter((r) => r.error !== 'ECONNREFUSED' && r.sentAt <= at && (r.endAt === null || r.endAt > at)).length,
  };
}
