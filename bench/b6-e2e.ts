// B6 end to end against a direct-write peer: 1,000-line inventory snapshots through HTTP ->
// gateway -> Kafka -> projector -> PostgreSQL -> synchronous reply (the project, as `npm start`
// runs it), against the same gateway applying each command inside the request with the same
// applyCommand (b6-server.ts). Both run the project's outbox relay. Closed loop at saturation, with
// 1 shop and with 4 shops, the two designs interleaved in the same run; nothing may be lost.
import { Agent, request, type IncomingHttpHeaders } from 'node:http';
import { fileURLToPath } from 'node:url';
import { createPool, type Pool } from '@ingest/db';
import { createKafka, ensureTopics, readKafkaSecurity, topicPlan, type TopicNames } from '@ingest/kafka';
import { createBenchDatabase } from './lib/db.ts';
import { ServerProcess } from './lib/serverProcess.ts';
import { median, percentile, round, say, sleep } from './lib/util.ts';

// The same TLS/SASL settings as the services, for a KAFKA_BROKERS cluster that needs them.
const kafkaSecurity = readKafkaSecurity(process.env);

export interface B6Settings {
  lines_per_request: number;
  /** Concurrent closed-loop clients (each with its own location, so no snapshot is ever stale). */
  clients: number;
  shop_counts: number[];
  seconds: number;
  warmup_seconds: number;
  /** Rounds of the interleaved points; a design's figure is the median over rounds. */
  rounds: number;
  partitions: number;
  drain_timeout_s: number;
}

const DESIGNS = ['pipeline', 'peer'] as const;
type Design = (typeof DESIGNS)[number];

export interface B6Point {
  design: Design;
  shops: number;
  round: number;
  clients: number;
  /** Replies within the measured window (lines_per_s, requests_per_s and the latencies are over these). */
  requests: number;
  /** Over the whole loop. */
  statuses: Record<string, number>;
  seconds: number;
  lines_per_s: number;
  requests_per_s: number;
  p50_ms: number;
  p95_ms: number;
  p99_ms: number;
  /** 200 replies whose counts are not lines_upserted = lines, lines_stale = 0. */
  bad_replies: number;
  /** Over the whole loop of the point (warm-up, window, tail): stored results (command_results); lost: 200 replies without one. */
  results_stored: number;
  lost: number;
  non_200: number;
  server_cpu_ms_per_request: number;
  event_loop_p99_ms: number;
  /** Outbox rows the relay had not published when the point ended, and how long it then took (null: not within the drain timeout). */
  outbox_pending_at_end: number;
  outbox_drain_seconds: number | null;
  /**
   * Lines of the window's good replies over the window plus the time the relay then took to publish
   * what the window left in the outbox: the rate at which writes AND their events got out (null: not drained).
   */
  lines_per_s_published: number | null;
  /** Pipeline only: commands per projector transaction (group commit) and projector seconds per command, from its metrics. */
  projector?: { commands_per_transaction: number | null; transactions: number; apply_ms_per_command: number | null };
}

export interface B6Result {
  settings: B6Settings;
  shops: Array<{ shop: string; partition: number }>;
  points: B6Point[];
  /** Median lines/s over rounds, by design and shop count. */
  lines_per_s: Record<Design, Record<string, number>>;
  ratio_1_shop: number | null;
  ratio_4_shops: number | null;
  /** The same ratios on lines_per_s_published (reported beside the targets, not instead of them). */
  ratio_published_1_shop: number | null;
  ratio_published_4_shops: number | null;
  single_shop_lines_per_s: number | null;
  peer_single_shop_lines_per_s: number | null;
  nothing_lost: boolean;
  /** Set when a relay did not publish its outbox within the drain timeout: the points after it were not run. */
  relay_stalled: string | null;
}

export const SECRET = 'bench-ingest-secret';
export const SNAPSHOT = '/api/ingest/inventory-snapshot';

/** One POST with the bench's ingest secret over `agent`; B7 reuses it (and reads Retry-After). */
export function post(
  agent: Agent,
  port: number,
  path: string,
  body: string | Buffer,
  extraHeaders: Record<string, string> = {},
): Promise<{ status: number; text: string; headers: IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path,
        agent,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          'x-ingest-secret': SECRET,
          ...extraHeaders,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8'), headers: res.headers }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Sums of a Prometheus histogram from a /metrics text (all label sets added up, or those matching `labels`). */
function histogram(text: string, name: string, labels = ''): { sum: number; count: number } {
  const total = (suffix: string) =>
    text
      .split('\n')
      .filter((l) => l.startsWith(`${name}_${suffix}`) && l.includes(labels))
      .reduce((a, l) => a + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
  return { sum: total('sum'), count: total('count') };
}

interface Target {
  shop: string;
  shopIndex: number;
  location: string;
}

interface LoopResult {
  /** Replies that arrived within the measured window: latency, and whether it was a 200 with the expected counts. */
  window: Array<{ ms: number; good: boolean }>;
  /** Over the whole loop (warm-up and tail included). */
  statuses: Record<string, number>;
  requests: number;
  ok: number;
  bad: number;
}

export async function runB6(s: B6Settings, brokers: string[], id: string): Promise<B6Result> {
  const kafka = createKafka({ brokers, security: kafkaSecurity, clientId: `ingest-bench-b6-${id}` });
  const topics = Object.fromEntries(
    DESIGNS.map((d) => [
      d,
      {
        commands: `bench.${id}.b6.${d}.commands`,
        audit: `bench.${id}.b6.${d}.audit`,
        stockZero: `bench.${id}.b6.${d}.stock-zero`,
        stockRestored: `bench.${id}.b6.${d}.stock-restored`,
      },
    ]),
  ) as Record<Design, TopicNames>;
  const servers: Partial<Record<Design, ServerProcess>> = {};
  const dbs: Partial<Record<Design, Pool>> = {};
  try {
    for (const d of DESIGNS) {
      await ensureTopics(kafka, topicPlan(topics[d], s.partitions));
      const url = await createBenchDatabase(`ingest_bench_b6_${d}`);
      dbs[d] = createPool({ connectionString: url, max: 2, applicationName: 'ingest-bench-b6' });
      const t = topics[d];
      servers[d] = await ServerProcess.start(
        fileURLToPath(new URL('./b6-server.ts', import.meta.url)),
        [d],
        {
          DATABASE_URL: url,
          KAFKA_BROKERS: brokers.join(','),
          COMMANDS_TOPIC: t.commands,
          AUDIT_TOPIC: t.audit,
          STOCK_ZERO_TOPIC: t.stockZero,
          STOCK_RESTORED_TOPIC: t.stockRestored,
          PROJECTOR_GROUP_ID: `bench-${id}-b6-projector`,
          INGEST_SECRET: SECRET,
          PORT: '0',
          HOST: '127.0.0.1',
          DAILY_SNAPSHOT_CHECK_MS: '3600000',
        },
        profileArgs(d),
      );
      say(`B6: ${d} server on port ${servers[d].port}`);
    }
    const server = (d: Design) => servers[d]!;
    const db = (d: Design) => dbs[d]!;
    const setupAgent = new Agent({ keepAlive: true, maxSockets: 2 });
    const call = async (d: Design, path: string, body: unknown): Promise<unknown> => {
      const r = await post(setupAgent, server(d).port, path, JSON.stringify(body));
      if (r.status !== 200) throw new Error(`B6 ${d}: ${path} answered ${r.status}: ${r.text.slice(0, 300)}`);
      return JSON.parse(r.text) as unknown;
    };

    // Shops on distinct partitions of the pipeline's commands topic where there are enough partitions
    // (the peer has no partitions: 4 shops are 4 independent locks there).
    const maxShops = Math.max(...s.shop_counts);
    const chosen: Array<{ shop: string; partition: number; locations: string[]; barcodes: string[] }> = [];
    for (let i = 0; chosen.length < maxShops && i < 60; i++) {
      const shop = `bench-b6-${i}.myshop.example`;
      const res = (await call('pipeline', '/api/admin/locations', {
        shop,
        locations: Array.from({ length: s.clients }, (_, k) => ({ name: `B6-${i}-${k}` })),
      })) as {
        locations: Array<{ location_id: string }>;
      };
      const partition = (
        await db('pipeline').query<{ p: number }>(
          'SELECT kafka_partition AS p FROM agent_runtime.processed_commands WHERE shop = $1 LIMIT 1',
          [shop],
        )
      ).rows[0]!.p;
      const used = new Set(chosen.map((c) => c.partition));
      if (used.has(partition) && used.size < Math.min(s.partitions, maxShops)) continue;
      const barcodes = Array.from(
        { length: s.lines_per_request },
        (_, k) => `49${String(i).padStart(3, '0')}${String(k).padStart(8, '0')}`,
      );
      chosen.push({ shop, partition, locations: res.locations.map((l) => l.location_id), barcodes });
    }
    for (const c of chosen) {
      const products = { shop: c.shop, products: c.barcodes.map((barcode, k) => ({ barcode, product_name: `B6 ${c.shop} ${k}` })) };
      await call('peer', '/api/admin/locations', {
        shop: c.shop,
        locations: c.locations.map((location_id, k) => ({ location_id, name: `B6-${k}` })),
      });
      for (const d of DESIGNS) await call(d, '/api/ingest/products', products);
    }
    say(
      `B6: shops ${chosen.map((c) => `${c.shop} (partition ${c.partition})`).join(', ')}; ${s.clients} locations each, ${s.lines_per_request} products`,
    );

    // Bodies: every request changes every line of its location (values move with the location's own
    // request count, mod 97), built from pre-serialised line arrays so the load generator stays light.
    const VARIANTS = 97;
    const linesJson = chosen.map((c) =>
      Array.from({ length: VARIANTS }, (_, n) =>
        JSON.stringify(c.barcodes.map((barcode, k) => ({ barcode, on_hand_qty: ((n + k) % 97) + 1, available_qty: (n + k) % 89 }))),
      ),
    );
    const sent = new Map<string, number>();
    const bodyOf = (t: Target): string => {
      const key = `${t.shop}/${t.location}`;
      const n = (sent.get(key) ?? 0) + 1;
      sent.set(key, n);
      return `{"shop":${JSON.stringify(t.shop)},"source_system":"bench-wms","location_id":"${t.location}","lines":${linesJson[t.shopIndex]![n % VARIANTS]!}}`;
    };
    const count = async (d: Design, sql: string) => (await db(d).query<{ n: number }>(sql)).rows[0]!.n;
    const results = (d: Design) =>
      count(d, `SELECT count(*)::int AS n FROM agent_runtime.command_results WHERE kind = 'inventory.snapshot'`);
    const pending = (d: Design) => count(d, 'SELECT count(*)::int AS n FROM agent_runtime.outbox WHERE published_at IS NULL');
    const relay: { stalled: string | null } = { stalled: null };
    /** Waits until the design's relay has published every outbox row; null (and `relay.stalled` set) when it does not in time. */
    const drain = async (d: Design): Promise<number | null> => {
      const t0 = performance.now();
      while ((await pending(d)) > 0) {
        if (performance.now() - t0 > s.drain_timeout_s * 1000) {
          relay.stalled ??= `${d}: the relay left ${await pending(d)} outbox rows unpublished for ${s.drain_timeout_s} s`;
          return null;
        }
        await sleep(200);
      }
      return (performance.now() - t0) / 1000;
    };

    // Every location gets its levels first, one snapshot at a time: a snapshot that creates levels
    // emits no stock event, so a burst of them leaves a run of audit-batch outbox rows that one relay
    // round would publish together (20 rows x 1,000 records; see the README's B6 notes).
    for (const d of DESIGNS) {
      const t0 = performance.now();
      for (const [i, c] of chosen.entries()) {
        for (const [k, location] of c.locations.entries()) {
          const r = await post(setupAgent, server(d).port, SNAPSHOT, bodyOf({ shop: c.shop, shopIndex: i, location }));
          if (r.status !== 200) throw new Error(`B6 ${d}: seeding snapshot answered ${r.status}: ${r.text.slice(0, 300)}`);
          if (k % 8 === 7 && (await drain(d)) === null) throw new Error(`B6 ${d} while seeding: ${relay.stalled}`);
        }
        if ((await drain(d)) === null) throw new Error(`B6 ${d} while seeding: ${relay.stalled}`);
      }
      say(`B6: ${d}: ${chosen.length * s.clients} locations seeded in ${round((performance.now() - t0) / 1000, 1)} s`);
    }
    setupAgent.destroy();

    const targets = (shops: number): Target[] =>
      Array.from({ length: s.clients }, (_, c) => ({
        shop: chosen[c % shops]!.shop,
        shopIndex: c % shops,
        location: chosen[c % shops]!.locations[Math.floor(c / shops)]!,
      }));

    /**
     * One closed loop of `warmup + seconds`: every client sends its next body when its reply arrives.
     * Measured: the replies that arrive within the window after the warm-up (the system is at its
     * steady state then); `atStart` / `atEnd` run at the window's edges while the load goes on.
     */
    const closedLoop = async (d: Design, shops: number, atStart: () => Promise<void>, atEnd: () => Promise<void>): Promise<LoopResult> => {
      const agent = new Agent({ keepAlive: true, maxSockets: s.clients });
      const out: LoopResult = { window: [], statuses: {}, bad: 0, ok: 0, requests: 0 };
      const from = performance.now() + s.warmup_seconds * 1000;
      const to = from + s.seconds * 1000;
      const edges = [sleep(from - performance.now()).then(atStart), sleep(to - performance.now()).then(atEnd)];
      await Promise.all(
        targets(shops).map(async (t) => {
          while (performance.now() < to) {
            const body = bodyOf(t);
            const t0 = performance.now();
            const r = await post(agent, server(d).port, SNAPSHOT, body).catch(() => ({ status: 0, text: '' }));
            const t1 = performance.now();
            out.requests++;
            out.statuses[String(r.status)] = (out.statuses[String(r.status)] ?? 0) + 1;
            let good = false;
            if (r.status === 200) {
              out.ok++;
              const reply = JSON.parse(r.text) as { lines_upserted?: number; lines_stale?: number };
              good = reply.lines_upserted === s.lines_per_request && reply.lines_stale === 0;
              if (!good) out.bad++;
            }
            if (t1 >= from && t1 < to) out.window.push({ ms: t1 - t0, good });
          }
        }),
      );
      await Promise.all(edges);
      agent.destroy();
      return out;
    };

    const metrics = async (d: Design) => (d === 'pipeline' ? (await fetch(`http://127.0.0.1:${server(d).port}/metrics`)).text() : '');

    const points: B6Point[] = [];
    const measurePoint = async (d: Design, shops: number, pass: number): Promise<B6Point> => {
      // No carry-over: both relays have published everything before this point starts.
      for (const other of DESIGNS) await drain(other);
      if (relay.stalled) say(`B6: ${relay.stalled}; this point runs on a backlog`);
      const before = await results(d);
      let m0 = '';
      let m1 = '';
      let stats = { event_loop_delay_ms: { p99: 0 }, cpu_ms: 0 };
      const r = await closedLoop(
        d,
        shops,
        async () => {
          await server(d).ask('reset');
          m0 = await metrics(d);
        },
        async () => {
          stats = await server(d).ask<typeof stats>('stats');
          m1 = await metrics(d);
        },
      );
      const stored = (await results(d)) - before;
      const left = await pending(d);
      const drainSeconds = await drain(d);
      const inWindow = r.window.length;
      const ms = r.window.map((x) => x.ms);
      const p: B6Point = {
        design: d,
        shops,
        round: pass,
        clients: s.clients,
        requests: inWindow,
        statuses: r.statuses,
        seconds: s.seconds,
        lines_per_s: Math.round((r.window.filter((x) => x.good).length * s.lines_per_request) / s.seconds),
        requests_per_s: round(inWindow / s.seconds, 1),
        p50_ms: round(median(ms), 1),
        p95_ms: round(percentile(ms, 95), 1),
        p99_ms: round(percentile(ms, 99), 1),
        bad_replies: r.bad,
        results_stored: stored,
        lost: Math.max(0, r.ok - stored),
        non_200: r.requests - r.ok,
        server_cpu_ms_per_request: round(stats.cpu_ms / Math.max(1, inWindow), 1),
        event_loop_p99_ms: stats.event_loop_delay_ms.p99,
        outbox_pending_at_end: left,
        outbox_drain_seconds: drainSeconds === null ? null : round2(drainSeconds),
        lines_per_s_published:
          drainSeconds === null
            ? null
            : Math.round((r.window.filter((x) => x.good).length * s.lines_per_request) / (s.seconds + drainSeconds)),
      };
      if (d === 'pipeline') {
        const [g0, g1] = [histogram(m0, 'projector_group_commands'), histogram(m1, 'projector_group_commands')];
        const [a0, a1] = [
          histogram(m0, 'projector_command_seconds', 'inventory.snapshot'),
          histogram(m1, 'projector_command_seconds', 'inventory.snapshot'),
        ];
        // Grouped transactions are in the group histogram; commands applied alone only in the duration one.
        const applied = a1.count - a0.count;
        const transactions = g1.count - g0.count + Math.max(0, applied - (g1.sum - g0.sum));
        p.projector = {
          commands_per_transaction: transactions > 0 ? round(applied / transactions, 2) : null,
          transactions,
          apply_ms_per_command: applied > 0 ? round((1000 * (a1.sum - a0.sum)) / applied, 1) : null,
        };
      }
      say(
        `B6 ${d} ${shops} shop(s) round ${pass}: ${p.lines_per_s} lines/s (${p.requests} requests in ${p.seconds} s, p50/p95/p99 ${p.p50_ms}/${p.p95_ms}/${p.p99_ms} ms), ` +
          `statuses ${JSON.stringify(p.statuses)}, stored ${stored}, lost ${p.lost}, non-200 ${p.non_200}, bad ${p.bad_replies}, server CPU ${p.server_cpu_ms_per_request} ms/request, ` +
          `outbox left ${left} (drained in ${p.outbox_drain_seconds} s)${p.projector ? `, projector ${JSON.stringify(p.projector)}` : ''}`,
      );
      return p;
    };

    for (let pass = 1; pass <= s.rounds; pass++) {
      for (const [j, shops] of s.shop_counts.entries()) {
        // ABBA: the design that goes first alternates.
        const order: readonly Design[] = (pass + j) % 2 === 1 ? DESIGNS : [...DESIGNS].reverse();
        for (const d of order) {
          if (relay.stalled) break;
          points.push(await measurePoint(d, Math.min(shops, chosen.length), pass));
        }
      }
    }

    const lines = Object.fromEntries(
      DESIGNS.map((d) => [
        d,
        Object.fromEntries(
          s.shop_counts.map((n) => [
            String(n),
            median(points.filter((p) => p.design === d && p.shops === Math.min(n, chosen.length)).map((p) => p.lines_per_s)),
          ]),
        ),
      ]),
    ) as Record<Design, Record<string, number>>;
    const ratio = (n: string) => (lines.pipeline[n] && lines.peer[n] ? round(lines.pipeline[n] / lines.peer[n], 3) : null);
    const published = (d: Design, n: string): number | null => {
      const v = points.filter((p) => p.design === d && p.shops === Math.min(Number(n), chosen.length)).map((p) => p.lines_per_s_published);
      return v.length > 0 && v.every((x) => x !== null) ? median(v) : null;
    };
    const ratioPublished = (n: string) => {
      const [a, b] = [published('pipeline', n), published('peer', n)];
      return a && b ? round(a / b, 3) : null;
    };
    if (relay.stalled) say(`B6 stopped: ${relay.stalled}`);
    return {
      ratio_1_shop: ratio('1'),
      ratio_4_shops: ratio('4'),
      ratio_published_1_shop: ratioPublished('1'),
      ratio_published_4_shops: ratioPublished('4'),
      single_shop_lines_per_s: lines.pipeline['1'] ?? null,
      peer_single_shop_lines_per_s: lines.peer['1'] ?? null,
      // The pipeline answers every request 200 with its counts; the peer (the comparison, not the
      // product) may refuse one with 503 under the same load, which is a refusal, not a loss.
      nothing_lost: points.every((p) => p.lost === 0 && p.bad_replies === 0 && (p.design !== 'pipeline' || p.non_200 === 0)),
      relay_stalled: relay.stalled,
      lines_per_s: lines,
      settings: s,
      shops: chosen.map((c) => ({ shop: c.shop, partition: c.partition })),
      points,
    };
  } finally {
    for (const d of DESIGNS) await servers[d]?.stop().catch(() => {});
    for (const d of DESIGNS) await dbs[d]?.end().catch(() => {});
    const admin = kafka.admin();
    await admin.connect();
    await admin.deleteTopics({ topics: DESIGNS.flatMap((d) => Object.values(topics[d])) }).catch(() => {});
    await admin.disconnect();
  }
}

const round2 = (n: number) => round(n, 2);

/**
 * BENCH_B6_CPU_PROF_DIR: the pipeline server writes a V8 CPU profile of its whole run there (seeding
 * included), for `node bench/profile-summary.ts <file>`. Off by default: profiling slows the server.
 */
function profileArgs(d: Design): string[] {
  const dir = process.env['BENCH_B6_CPU_PROF_DIR'];
  return dir && d === 'pipeline' ? ['--cpu-prof', '--cpu-prof-dir', dir, '--cpu-prof-interval', '1000'] : [];
}
