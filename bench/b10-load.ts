// B10's load: inventory snapshots of several shops, open loop (request k of a shop leaves at its
// offset + k·interval, whatever the earlier answers), as B7 sends its quiet shops; and the closed-loop
// capacity probe the rate is a fraction of. Every answer is kept with its due time, so the answers
// around the swap of an in-place rebuild can be picked out afterwards.
import type { Agent } from 'node:http';
import { partitionForKey } from '@ingest/kafka';
import { post, SNAPSHOT } from './b6-e2e.ts';
import { percentile, round, say, sleep } from './lib/util.ts';

export interface LoadShop {
  shop: string;
  partition: number;
  /** `quiet`: a small retailer at a tenth of the capacity; `busy`: a bigger one. */
  role: 'quiet' | 'busy';
  lines_per_s: number;
  /** Bodies sent in turn (every line's values change from one to the next). */
  bodies: Buffer[];
}

export interface Answer {
  shop: string;
  role: LoadShop['role'];
  /** Seconds since the phase started, when the request was due. */
  at: number;
  status: number;
  ms: number;
  retry_after: string | null;
  /** logs_written of a 200 (what the projector wrote for it). */
  logs_written: number | null;
}

export interface AnswerStats {
  requests: number;
  statuses: Record<string, number>;
  /** 200 and 202: appended to the log, so their effect must end in the database. */
  accepted: number;
  count_202: number;
  count_429: number;
  count_503: number;
  /** Anything else: other statuses and connection errors (status 0). */
  errors: number;
  p50_ms: number;
  p95_ms: number;
  p99_ms: number;
  max_ms: number;
}

/** Per-shop body counters: a shop's bodies are sent in turn across phases, so consecutive ones always differ. */
export function bodyCycle(): (shop: LoadShop) => Buffer {
  const sent = new Map<string, number>();
  return (s) => {
    const n = (sent.get(s.shop) ?? 0) + 1;
    sent.set(s.shop, n);
    return s.bodies[n % s.bodies.length]!;
  };
}

async function send(agent: Agent, port: number, body: Buffer): Promise<Omit<Answer, 'shop' | 'role' | 'at' | 'ms'>> {
  try {
    const r = await post(agent, port, SNAPSHOT, body);
    let logs: number | null = null;
    if (r.status === 200) logs = (JSON.parse(r.text) as { logs_written?: number }).logs_written ?? null;
    return { status: r.status, retry_after: r.headers['retry-after'] ?? null, logs_written: logs };
  } catch {
    return { status: 0, retry_after: null, logs_written: null };
  }
}

/**
 * Open loop over `shops` until `stop(elapsed ms)` says so (checked between sends), then waits for
 * every answer (at most `drainMs`). Streams start out of step with each other.
 */
export async function openLoop(opts: {
  port: number;
  agent: Agent;
  shops: LoadShop[];
  linesPerRequest: number;
  bodyOf: (shop: LoadShop) => Buffer;
  stop: (elapsedMs: number) => boolean;
  drainMs: number;
}): Promise<Answer[]> {
  const streams = opts.shops.map((s, k) => {
    const intervalMs = (1000 * opts.linesPerRequest) / s.lines_per_s;
    return { s, intervalMs, next: (k * intervalMs) / opts.shops.length };
  });
  const answers: Answer[] = [];
  const pending: Array<Promise<void>> = [];
  const t0 = performance.now();
  for (;;) {
    const now = performance.now() - t0;
    if (opts.stop(now)) break;
    for (const st of streams)
      while (st.next <= now) {
        const due = st.next;
        st.next += st.intervalMs;
        // Kept from the send: one still without an answer after the drain has status -1 (its fate unknown).
        const a: Answer = { shop: st.s.shop, role: st.s.role, at: due / 1000, ms: 0, status: -1, retry_after: null, logs_written: null };
        answers.push(a);
        pending.push(
          send(opts.agent, opts.port, opts.bodyOf(st.s)).then((r) => void Object.assign(a, r, { ms: performance.now() - t0 - due })),
        );
      }
    const soonest = Math.min(...streams.map((st) => st.next));
    await sleep(Math.max(0, Math.min(soonest - (performance.now() - t0), 50)));
  }
  await Promise.race([Promise.all(pending), sleep(opts.drainMs)]);
  return answers;
}

/** Closed loop, `clients` over the shops: lines of the 200 answers per second after `warmupS`. */
export async function probeCapacity(opts: {
  port: number;
  agent: Agent;
  shops: LoadShop[];
  linesPerRequest: number;
  bodyOf: (shop: LoadShop) => Buffer;
  clients: number;
  warmupS: number;
  seconds: number;
}): Promise<{ lines_per_s: number; answers: Answer[] }> {
  const t0 = performance.now();
  const from = opts.warmupS * 1000;
  const until = from + opts.seconds * 1000;
  let lines = 0;
  const answers: Answer[] = [];
  await Promise.all(
    Array.from({ length: opts.clients }, async (_, c) => {
      const shop = opts.shops[c % opts.shops.length]!;
      while (performance.now() - t0 < until) {
        const sentAt = performance.now() - t0;
        const r = await send(opts.agent, opts.port, opts.bodyOf(shop));
        const at = performance.now() - t0;
        answers.push({ shop: shop.shop, role: shop.role, at: sentAt / 1000, ms: at - sentAt, ...r });
        if (r.status === 200 && at >= from && at < until) lines += opts.linesPerRequest;
      }
    }),
  );
  return { lines_per_s: Math.round(lines / opts.seconds), answers };
}

export function statsOf(answers: Answer[]): AnswerStats {
  const statuses: Record<string, number> = {};
  for (const a of answers) statuses[String(a.status)] = (statuses[String(a.status)] ?? 0) + 1;
  const ok = answers.filter((a) => a.status === 200).map((a) => a.ms);
  const count = (s: number) => answers.filter((a) => a.status === s).length;
  return {
    requests: answers.length,
    statuses,
    accepted: count(200) + count(202),
    count_202: count(202),
    count_429: count(429),
    count_503: count(503),
    errors: answers.filter((a) => ![200, 202, 429, 503].includes(a.status)).length,
    p50_ms: round(percentile(ok, 50), 1),
    p95_ms: round(percentile(ok, 95), 1),
    p99_ms: round(percentile(ok, 99), 1),
    max_ms: round(Math.max(0, ...ok), 1),
  };
}

/** The answers of a phase by shop, and the quiet shops together; the first `warmupS` are not counted. */
export function phaseStats(answers: Answer[], warmupS: number) {
  const counted = answers.filter((a) => a.at >= warmupS);
  const shops = [...new Set(counted.map((a) => a.shop))].sort();
  return {
    quiet: statsOf(counted.filter((a) => a.role === 'quiet')),
    all: statsOf(counted),
    by_shop: Object.fromEntries(shops.map((s) => [s, statsOf(counted.filter((a) => a.shop === s))])),
  };
}

/**
 * The answers to requests in flight at any time within [from, to] s of the phase (a request is in
 * flight from its due time until its answer), `marginS` either side: what clients saw of a swap.
 */
export function answersAround(answers: Answer[], from: number, to: number, marginS: number): AnswerStats {
  return statsOf(answers.filter((a) => a.at <= to + marginS && a.at + a.ms / 1000 >= from - marginS));
}

/** The load's shops, each on a partition of its own, with a location and the products its bodies name. */
export async function setUpShops(
  s: { quiet_shops: number; partitions: number; lines_per_request: number; tag: string },
  port: number,
  agent: Agent,
): Promise<LoadShop[]> {
  const call = async (path: string, body: unknown): Promise<unknown> => {
    const r = await post(agent, port, path, JSON.stringify(body));
    if (r.status !== 200) throw new Error(`B10: ${path} answered ${r.status}: ${r.text.slice(0, 300)}`);
    return JSON.parse(r.text) as unknown;
  };
  const shops: LoadShop[] = [];
  for (let i = 0; shops.length < s.quiet_shops + 1 && i < 200; i++) {
    const shop = `bench-${s.tag}-${i}.myshop.example`;
    const partition = partitionForKey(shop, s.partitions);
    if (shops.some((x) => x.partition === partition) && shops.length < s.partitions) continue;
    shops.push({ shop, partition, role: shops.length === 0 ? 'busy' : 'quiet', lines_per_s: 1, bodies: [] });
  }
  for (const [i, x] of shops.entries()) {
    const loc = (await call('/api/admin/locations', { shop: x.shop, locations: [{ name: `B10-${i}` }] })) as {
      locations: Array<{ location_id: string }>;
    };
    const barcodes = Array.from({ length: s.lines_per_request }, (_, k) => `49${String(i).padStart(3, '0')}${String(k).padStart(8, '0')}`);
    await call('/api/ingest/products', {
      shop: x.shop,
      products: barcodes.map((barcode, k) => ({ barcode, product_name: `B10 ${i}/${k}` })),
    });
    // Every body changes every line's values (they move with the body's number, mod 31).
    x.bodies = Array.from({ length: 31 }, (_, n) =>
      Buffer.from(
        JSON.stringify({
          shop: x.shop,
          source_system: 'bench-wms',
          location_id: loc.locations[0]!.location_id,
          lines: barcodes.map((barcode, k) => ({ barcode, on_hand_qty: ((n + k) % 97) + 1, available_qty: (n + k) % 89 })),
        }),
      ),
    );
  }
  say(`B10: load shops ${shops.map((x) => `${x.shop} (${x.role}, partition ${x.partition})`).join(', ')}`);
  return shops;
}
