// The soak's load: open loop per shop (requests leave on time whatever the answers), one shop at a
// time bursting at `burst.factor` times its rate, each request of the MIX in turn. The checkable writes
// become the fault suite's `Sent` records; the other endpoints keep checks of their own here.
import type { Sent, Target } from '../../tests/faults/load.ts';
import { asSent, type Call, type Reply } from './client.ts';
import { Spool } from './spool.ts';
import {
  adminRequest,
  bulkRequest,
  commandRequest,
  deltaRequest,
  MIX,
  ordersRequest,
  productsRequest,
  levelsRequest,
  snapshotRequest,
  type SoakShop,
} from './requests.ts';

export interface Burst {
  everyS: number;
  lengthS: number;
  factor: number;
}

/** The shop (index) bursting `t` seconds into the load: each `everyS`, the next one for `lengthS`. */
export function burstingShop(t: number, shops: number, b: Burst): number | null {
  if (t < 0 || b.everyS <= 0 || t % b.everyS >= b.lengthS) return null;
  return Math.floor(t / b.everyS) % shops;
}

export interface Traffic {
  /** The checkable writes, spooled to a file until the end checks (spool.ts). */
  sent: Spool<Sent>;
  /** Orders answered 200 (transaction id, rows accepted): each must be stored once. */
  orders: Map<string, number>;
  dryBarcodes: string[];
  /** Async commands seen resolved (a 200 from GET, or an Idempotent-Replayed 200). */
  resolved: Set<string>;
  failures: string[];
  counts: Record<string, number>;
  /** One request of the mix for shop `i` now (the capacity phase's closed loop). */
  fireOne(i: number): Promise<Reply>;
  start(ratePerSec: number, burst: Burst): void;
  stop(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function createTraffic(o: { tag: string; shops: SoakShop[]; gateways: Target[]; call: Call; spoolPath: string }): Traffic {
  const sent = new Spool<Sent>(o.spoolPath);
  const orders = new Map<string, number>();
  const dryBarcodes: string[] = [];
  const resolved = new Set<string>();
  const failures: string[] = [];
  const counts: Record<string, number> = {};
  const pending = new Set<Promise<unknown>>();
  const perShop = o.shops.map(() => 0);
  let seq = 0;
  let rr = 0;
  const gateway = () => o.gateways[rr++ % o.gateways.length]!;
  const fail = (m: string) => failures.length < 200 && failures.push(m);
  const track = <T>(p: Promise<T>): Promise<T> => {
    pending.add(p);
    void p.finally(() => pending.delete(p));
    return p;
  };

  /** A client that got 202 polls result_url until the stored result (D6); result retention is minutes in a soak. */
  const poll = async (id: string, g: Target) => {
    for (let i = 0; i < 240 && !resolved.has(id); i++) {
      await sleep(500);
      const r = await o.call(g.port, commandRequest(id));
      if (r.status === 200) resolved.add(id);
      else if (r.status !== 202) return void fail(`GET /api/commands/${id} answered ${r.status ?? r.error} while polling`);
    }
    if (!resolved.has(id)) fail(`command ${id} not resolved after 2 minutes of polling`);
  };

  const record = (kind: Sent['kind'], s: SoakShop, g: Target, path: string, r: Reply, extra: Partial<Sent>) => {
    const rec = asSent(++seq, kind, s.shop, g.name, path, r, extra);
    sent.push(rec);
    if (rec.commandId) void track(poll(rec.commandId, g));
    return rec;
  };

  const fireOne = async (i: number): Promise<Reply> => {
    const s = o.shops[i]!;
    const n = perShop[i]!++;
    const kind = MIX[n % MIX.length]!;
    const g = gateway();
    const id = `${o.tag}-${i}-${n}`;
    counts[kind] = (counts[kind] ?? 0) + 1;
    switch (kind) {
      case 'products':
      case 'async': {
        const barcodes = n % 3 === 0 ? [`${id}-a`, `${id}-b`] : [`${id}-a`];
        const req = productsRequest(s, barcodes, kind === 'async');
        const r = await o.call(g.port, req);
        record(kind, s, g, req.path, r, { barcodes });
        return r;
      }
      case 'bulk': {
        const req = bulkRequest(s, `${id}-c`);
        const r = await o.call(g.port, req);
        record('bulk', s, g, req.path, r, { barcodes: [`${id}-c`] });
        return r;
      }
      case 'delta': {
        const delta = (n % 9) + 1;
        const req = deltaRequest(s, id, delta);
        const r = await o.call(g.port, req);
        record('delta', s, g, req.path, r, { key: id, delta });
        return r;
      }
      case 'idem': {
        // A client that lost the answer sends the same request with the same Idempotency-Key again.
        const req = productsRequest(s, [`${id}-i`]);
        req.headers = { ...req.headers, 'idempotency-key': `${id}-key` };
        const r = await o.call(g.port, req);
        record('products', s, g, req.path, r, { barcodes: [`${id}-i`] });
        const again = await o.call(gateway().port, req);
        const replayed = again.headers?.get('idempotent-replayed') === 'true';
        if (r.status === 200 && !(again.status === 200 && replayed && again.text === r.text))
          fail(`Idempotency-Key retry ${id}-key: first 200, again ${again.status} replayed=${replayed}`);
        if (r.status === 202 && !(replayed && (again.status === 200 || again.status === 202)))
          fail(`Idempotency-Key retry ${id}-key: first 202, again ${again.status} replayed=${replayed}`);
        return r;
      }
      case 'dry': {
        // Dry runs change nothing: a product that must never exist, a delta verify.ts would see in INV's sum.
        const req = n % 2 ? productsRequest(s, [`${id}-dry`], false, '?dry_run=true') : deltaRequest(s, `${id}-dry`, 5, '?dry_run=true');
        if (n % 2) dryBarcodes.push(`${id}-dry`);
        const r = await o.call(g.port, req);
        if (r.status !== 200 || r.body?.dry_run !== true)
          fail(`dry run ${req.path} answered ${r.status ?? r.error}: ${r.text.slice(0, 160)}`);
        return r;
      }
      case 'orders': {
        const r = await o.call(g.port, ordersRequest(s, id));
        if (r.status === 200) orders.set(id, Number(r.body?.accepted_rows ?? -1));
        else if (r.status === 202 && r.body?.command_id) void track(poll(r.body.command_id, g).then(() => orders.set(id, 2)));
        else fail(`orders ${id} answered ${r.status ?? r.error}: ${r.text.slice(0, 160)}`);
        return r;
      }
      case 'snapshot':
      case 'levels': {
        const r = await o.call(g.port, kind === 'snapshot' ? snapshotRequest(s, n) : levelsRequest(s, n));
        if (r.status === 202 && r.body?.command_id) void track(poll(r.body.command_id, g));
        else if (r.status !== 200) fail(`${kind} of ${s.shop} answered ${r.status ?? r.error}: ${r.text.slice(0, 160)}`);
        return r;
      }
    }
  };

  let timer: NodeJS.Timeout | null = null;
  let adminTimer: NodeJS.Timeout | null = null;
  return {
    sent,
    orders,
    dryBarcodes,
    resolved,
    failures,
    counts,
    fireOne: (i) => track(fireOne(i)),
    start: (ratePerSec, burst) => {
      const started = Date.now();
      let last = started;
      const credit = o.shops.map(() => 0);
      const base = ratePerSec / o.shops.length;
      timer = setInterval(() => {
        const now = Date.now();
        const bursting = burstingShop((now - started) / 1000, o.shops.length, burst);
        for (let i = 0; i < o.shops.length; i++) {
          const rate = base * (i === bursting ? burst.factor : 1);
          // at most a second's worth at once: a stalled loop must not turn into a burst of its own
          credit[i] = Math.min(rate, credit[i]! + (rate * (now - last)) / 1000);
          for (; credit[i]! >= 1; credit[i]! -= 1) void track(fireOne(i));
        }
        last = now;
      }, 50);
      let a = 0;
      adminTimer = setInterval(() => {
        const s = o.shops[a % o.shops.length]!;
        const req = adminRequest(s, a++);
        void track(
          o.call(gateway().port, req).then((r) => {
            counts['admin'] = (counts['admin'] ?? 0) + 1;
            if (r.status === 202 && r.body?.command_id) void track(poll(r.body.command_id, gateway()));
            else if (r.status !== 200) fail(`${req.method} ${req.path} answered ${r.status ?? r.error}: ${r.text.slice(0, 160)}`);
          }),
        );
      }, 3000);
    },
    stop: async () => {
      if (timer) clearInterval(timer);
      if (adminTimer) clearInterval(adminTimer);
      while (pending.size) await Promise.race([...pending, sleep(1000)]);
    },
  };
}
