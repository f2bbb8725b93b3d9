// Open-loop HTTP load: requests leave at a fixed rate whatever the answers (a slow or dead gateway
// does not slow the clients down), each one recorded with what it asked for and what it got.
// Every write is checkable afterwards: a unique barcode per product, a unique idempotency key per
// inventory delta. Used by the fault suite, the deployment test and the image test.
import { Agent, request as httpRequest } from 'node:http';

export const INGEST_SECRET = 'faults-ingest-secret';
export const CRON_SECRET = 'faults-cron-secret';

export type RequestKind = 'products' | 'bulk' | 'async' | 'delta' | 'get';

export interface Shop {
  shop: string;
  locationId: string;
  /** available_qty of the shop's one level (barcode INV) before the load. */
  base: number;
}

export interface Sent {
  seq: number;
  kind: RequestKind;
  shop: string;
  gateway: string;
  path: string;
  sentAt: number;
  endAt: number | null;
  status: number | null;
  retryAfter: string | null;
  body: any;
  text: string;
  /** A connection error or timeout: no answer. */
  error: string | null;
  barcodes: string[];
  key: string | null;
  delta: number;
  /** From a 202 body (async or late reply), or the id a GET asked for. */
  commandId: string | null;
}

export interface Target {
  name: string;
  port: number;
}

export interface LoadOptions {
  tag: string;
  shops: Shop[];
  targets: Target[];
  ratePerSec: number;
  /** Share of products (ingest), bulk (cron), async products, inventory deltas; the rest are GETs of 202'd ids. */
  mix?: Partial<Record<RequestKind, number>>;
  requestTimeoutMs?: number;
  maxInFlight?: number;
  /** A share of synchronous products requests of `items` products each (kind `products`): slow to project. */
  large?: { share: number; items: number };
  /**
   * `fresh`: a connection of its own per request, so that a request is either refused at connect
   * (error ECONNREFUSED: it never reached a server) or reaches one, never lost on a keep-alive socket
   * the server has just closed. Default `keep-alive`.
   */
  connections?: 'keep-alive' | 'fresh';
}

export interface Load {
  records: Sent[];
  setTargets(targets: Target[]): void;
  start(): void;
  /** Stops sending; resolves when every request sent has an answer or has timed out. */
  stop(): Promise<void>;
  inFlight(): number;
  /** Requests the client could not send because maxInFlight was reached (reported, never hidden). */
  droppedByClient(): number;
  /** Sends one request now (outside the schedule), recorded like the others. */
  send(kind: RequestKind, shop: Shop, target?: Target): Promise<Sent>;
}

const DEFAULT_MIX: Record<RequestKind, number> = { products: 0.5, bulk: 0.1, async: 0.1, delta: 0.2, get: 0.1 };

type MixKind = RequestKind | 'large';

export function createLoad(opts: LoadOptions): Load {
  const records: Sent[] = [];
  const mix: Partial<Record<MixKind, number>> = { ...DEFAULT_MIX, ...opts.mix, ...(opts.large ? { large: opts.large.share } : {}) };
  const kinds = Object.keys(mix) as MixKind[];
  const share = (k: MixKind) => mix[k] ?? 0;
  const total = kinds.reduce((s, k) => s + share(k), 0);
  const timeoutMs = opts.requestTimeoutMs ?? 25_000;
  const maxInFlight = opts.maxInFlight ?? 400;
  // Open loop: never queue in the client; maxInFlight bounds the sockets.
  const agent = opts.connections === 'fresh' ? null : new Agent({ keepAlive: true, maxSockets: Infinity });
  let targets = [...opts.targets];
  let seq = 0;
  let rr = 0;
  let inFlight = 0;
  let dropped = 0;
  let timer: NodeJS.Timeout | null = null;
  let startedAt = 0;
  let scheduled = 0;
  const pending = new Set<Promise<void>>();
  const asyncIds: string[] = [];

  // A deterministic mix: request n gets the kind whose cumulative share covers (n * golden) mod 1.
  const kindOf = (n: number): MixKind => {
    const x = (n * 0.6180339887498949) % 1;
    let acc = 0;
    for (const k of kinds) {
      acc += share(k) / total;
      if (x < acc) return k;
    }
    return 'products';
  };

  const build = (
    kind: MixKind,
    shop: Shop,
    n: number,
  ): { method: string; path: string; headers: Record<string, string>; body: unknown; rec: Partial<Sent> } | null => {
    const ingest = { 'x-ingest-secret': INGEST_SECRET };
    switch (kind) {
      case 'large':
      case 'products':
      case 'async': {
        const barcodes =
          kind === 'large'
            ? Array.from({ length: opts.large?.items ?? 1 }, (_, i) => `${opts.tag}-${n}-l${i}`)
            : n % 3 === 0
              ? [`${opts.tag}-${n}-a`, `${opts.tag}-${n}-b`]
              : [`${opts.tag}-${n}-a`];
        return {
          method: 'POST',
          path: '/api/ingest/products',
          headers: kind === 'async' ? { ...ingest, prefer: 'respond-async' } : ingest,
          body: {
            shop: shop.shop,
            products: barcodes.map((barcode, i) => ({ barcode, product_name: `Fault item ${n}`, current_price: 100 + i })),
          },
          rec: { barcodes },
        };
      }
      case 'bulk': {
        const barcodes = [`${opts.tag}-${n}-c`];
        return {
          method: 'POST',
          path: '/api/products/bulk-upsert',
          headers: { 'x-cron-secret': CRON_SECRET, 'x-shop': shop.shop },
          body: { products: barcodes.map((barcode) => ({ barcode, product_name: `Fault bulk item ${n}`, brand: 'faults' })) },
          rec: { barcodes },
        };
      }
      case 'delta': {
        const delta = (n % 9) + 1; // 1..9, never clamps (base is large), so quantities add up exactly
        const key = `${opts.tag}-${n}`;
        return {
          method: 'POST',
          path: '/api/ingest/inventory-available',
          headers: ingest,
          body: {
            shop: shop.shop,
            source_system: 'faults',
            mode: 'delta',
            location_id: shop.locationId,
            idempotency_key: key,
            lines: [{ barcode: 'INV', available_delta: delta }],
          },
          rec: { key, delta },
        };
      }
      case 'get': {
        if (asyncIds.length === 0) return null;
        const id = asyncIds[n % asyncIds.length]!;
        return { method: 'GET', path: `/api/commands/${id}`, headers: ingest, body: undefined, rec: { commandId: id } };
      }
    }
  };

  const fire = (kind: MixKind, shop: Shop, target: Target): Promise<Sent> => {
    const n = ++seq;
    const spec = build(kind, shop, n) ?? build('products', shop, n)!;
    const actualKind: RequestKind = spec.method === 'GET' ? 'get' : kind === 'get' || kind === 'large' ? 'products' : kind;
    const rec: Sent = {
      seq: n,
      kind: actualKind,
      shop: shop.shop,
      gateway: target.name,
      path: spec.path,
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
      ...spec.rec,
    };
    records.push(rec);
    inFlight += 1;
    const payload = spec.body === undefined ? undefined : Buffer.from(JSON.stringify(spec.body));
    const p = new Promise<Sent>((resolve) => {
      let settled = false;
      const finish = (err: string | null) => {
        if (settled) return;
        settled = true;
        rec.endAt = Date.now();
        if (err) rec.error = err;
        inFlight -= 1;
        resolve(rec);
      };
      const req = httpRequest(
        {
          host: '127.0.0.1',
          port: target.port,
          method: spec.method,
          path: spec.path,
          agent: agent ?? false,
          headers: {
            ...spec.headers,
            ...(payload ? { 'content-type': 'application/json', 'content-length': String(payload.length) } : {}),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', (e) => finish(`response ${(e as NodeJS.ErrnoException).code ?? e.message}`));
          res.on('end', () => {
            rec.status = res.statusCode ?? 0;
            const ra = res.headers['retry-after'];
            rec.retryAfter = Array.isArray(ra) ? (ra[0] ?? null) : (ra ?? null);
            rec.text = Buffer.concat(chunks).toString('utf8').slice(0, 2000);
            try {
              rec.body = JSON.parse(rec.text);
            } catch {
              rec.body = null;
            }
            if (rec.kind !== 'get' && rec.status === 202 && typeof rec.body?.command_id === 'string') {
              rec.commandId = rec.body.command_id;
              asyncIds.push(rec.body.command_id);
            }
            finish(null);
          });
        },
      );
      req.setTimeout(timeoutMs, () => {
        req.destroy(new Error('timeout'));
        finish(`timeout after ${timeoutMs} ms`);
      });
      req.on('error', (e: NodeJS.ErrnoException) => finish(e.code ?? e.message));
      req.end(payload);
    });
    const tracked = p.then(() => {});
    pending.add(tracked);
    void tracked.finally(() => pending.delete(tracked));
    return p;
  };

  const tick = () => {
    const due = Math.floor(((Date.now() - startedAt) * opts.ratePerSec) / 1000);
    // at most a second's worth at once (a stalled event loop must not turn into a burst)
    const n = Math.min(due - scheduled, Math.ceil(opts.ratePerSec));
    scheduled = due;
    for (let i = 0; i < n; i++) {
      if (targets.length === 0) continue;
      if (inFlight >= maxInFlight) {
        dropped += 1;
        continue;
      }
      const shop = opts.shops[rr % opts.shops.length]!;
      const target = targets[rr % targets.length]!;
      rr += 1;
      void fire(kindOf(seq + 1), shop, target);
    }
  };

  return {
    records,
    setTargets: (t) => {
      targets = [...t];
    },
    start: () => {
      if (timer) return;
      startedAt = Date.now();
      scheduled = 0;
      timer = setInterval(tick, Math.max(5, Math.floor(1000 / opts.ratePerSec / 2)));
    },
    stop: async () => {
      if (timer) clearInterval(timer);
      timer = null;
      const deadline = Date.now() + timeoutMs + 5000;
      while (pending.size > 0 && Date.now() < deadline) await Promise.race([...pending, new Promise((r) => setTimeout(r, 500))]);
      agent?.destroy();
    },
    inFlight: () => inFlight,
    droppedByClient: () => dropped,
    send: (kind, shop, target) => fire(kind, shop, target ?? targets[0]!),
  };
}
