// B4 end to end: open-loop fixed arrival rates of 1,000-line inventory snapshots through the real
// pipeline (runGateway -> Kafka -> runProjector -> PostgreSQL -> synchronous reply), in-process.
import { createPool, type Pool } from '@ingest/db';
import { runGateway, type RunningGateway } from '@ingest/gateway';
import {
  createKafka,
  createMessageSink,
  ensureTopics,
  MAX_MESSAGE_BYTES,
  readKafkaSecurity,
  startLagMonitor,
  topicPlan,
  type LagMonitor,
  type TopicNames,
} from '@ingest/kafka';
import { runProjector, type RunningProjector } from '@ingest/projector';
import { silentLogger } from '@ingest/runtime/testing';
import { createBenchDatabase } from './lib/db.ts';
import { percentile, round, say, sleep } from './lib/util.ts';

// The same TLS/SASL settings as the services, for a KAFKA_BROKERS cluster that needs them.
const kafkaSecurity = readKafkaSecurity(process.env);

export interface B4Settings {
  /** Fractions of the capacity (B6: the pipeline's own saturation throughput) to offer. */
  fractions: number[];
  seconds_per_rate: number;
  lines_per_request: number;
  shops: number;
  partitions: number;
  lag_sample_ms: number;
  /** Longest wait for the replies and the backlog after a rate's arrivals stop. */
  drain_timeout_s: number;
  kafka_probe_messages: number;
}

export interface B4Rate {
  fraction: number;
  offered_lines_per_s: number;
  offered_requests_per_s: number;
  requests: number;
  statuses: Record<string, number>;
  accepted_requests: number;
  /** Accepted lines / wall time from the first arrival until the last reply and lag 0. */
  sustained_lines_per_s: number;
  wall_seconds: number;
  drain_seconds: number;
  p50_ms: number;
  p95_ms: number;
  p99_ms: number;
  share_202: number;
  count_429: number;
  count_503: number;
  other_errors: number;
  lag_max: number;
  /** Slope of a least-squares line through the lag samples taken while arrivals ran, commands/s. */
  lag_trend_per_s: number;
  lag_samples: number;
  processed_commands: number;
  /** Accepted but not processed once drained; null when the backlog did not drain in time (see pending_at_timeout). */
  lost: number | null;
  pending_at_timeout: number;
  drained: boolean;
  pass: boolean;
}

export interface B4Result {
  settings: B4Settings;
  capacity_lines_per_s: number;
  capacity_source: string;
  kafka_append_p99_ms: number;
  /** B1 projector p95 for a 10,000-line snapshot scaled to lines_per_request (B1 reports no p99). */
  b1_projector_ms_scaled: number | null;
  rates: B4Rate[];
  ratio_sustained: number;
  /** Best sustained lines/s of any rate, passing or not, over the capacity (what the pipeline drained at most). */
  ratio_best_sustained_any: number;
  highest_passing_fraction: number | null;
  p99_ms_at_half: number | null;
  fallbacks_202_at_half: number | null;
  p99_bound_at_half_ms: number | null;
}

const SECRET = 'bench-ingest-secret';
const HEADERS = { 'content-type': 'application/json', 'x-ingest-secret': SECRET };

async function postJson(url: string, body: string): Promise<{ status: number; json: unknown }> {
  const res = await fetch(url, { method: 'POST', headers: HEADERS, body });
  const text = await res.text();
  try {
    return { status: res.status, json: JSON.parse(text) as unknown };
  } catch {
    return { status: res.status, json: text };
  }
}

/** Least-squares slope of y over t (seconds); 0 for fewer than two points. */
export function slope(points: Array<[number, number]>): number {
  if (points.length < 2) return 0;
  const n = points.length;
  const mt = points.reduce((a, p) => a + p[0], 0) / n;
  const my = points.reduce((a, p) => a + p[1], 0) / n;
  let num = 0;
  let den = 0;
  for (const [t, y] of points) {
    num += (t - mt) * (y - my);
    den += (t - mt) ** 2;
  }
  return den === 0 ? 0 : num / den;
}

async function processedCount(db: Pool): Promise<number> {
  return (
    await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM agent_runtime.processed_commands WHERE kind = 'inventory.snapshot'`)
  ).rows[0]!.n;
}

/** Appends `n` messages of a request's size one after the other; p99 of the acknowledged append. */
async function kafkaProbe(brokers: string[], topic: string, n: number, bytes: number): Promise<number> {
  const kafka = createKafka({ brokers, security: kafkaSecurity, clientId: 'ingest-bench-b4-probe' });
  await ensureTopics(kafka, [{ topic, numPartitions: 1, configs: { 'max.message.bytes': String(MAX_MESSAGE_BYTES) } }]);
  const sink = await createMessageSink(kafka);
  const value = JSON.stringify({ pad: 'x'.repeat(bytes) });
  const times: number[] = [];
  try {
    for (let i = 0; i < n; i++) {
      const t0 = performance.now();
      await sink.send({ topic, key: `k${i % 3}`, value });
      times.push(performance.now() - t0);
    }
  } finally {
    await sink.close();
  }
  return percentile(times.slice(Math.min(3, n - 1)), 99);
}

export async function runB4(
  s: B4Settings,
  brokers: string[],
  id: string,
  capacity: { lines_per_s: number; source: string; b1_p95_ms_10k: number | null },
): Promise<B4Result> {
  const topics: TopicNames = {
    commands: `bench.${id}.b4.commands`,
    audit: `bench.${id}.b4.audit`,
    stockZero: `bench.${id}.b4.stock-zero`,
    stockRestored: `bench.${id}.b4.stock-restored`,
  };
  const probeTopic = `bench.${id}.b4.probe`;
  const kafka = createKafka({ brokers, security: kafkaSecurity, clientId: `ingest-bench-b4-${id}` });
  await ensureTopics(kafka, topicPlan(topics, s.partitions));
  const url = await createBenchDatabase('ingest_bench_b4');
  const groupId = `bench-${id}-b4-projector`;
  const env: NodeJS.ProcessEnv = {
    DATABASE_URL: url,
    KAFKA_BROKERS: brokers.join(','),
    COMMANDS_TOPIC: topics.commands,
    AUDIT_TOPIC: topics.audit,
    STOCK_ZERO_TOPIC: topics.stockZero,
    STOCK_RESTORED_TOPIC: topics.stockRestored,
    PROJECTOR_GROUP_ID: groupId,
    INGEST_SECRET: SECRET,
    PORT: '0',
    HOST: '127.0.0.1',
    DAILY_SNAPSHOT_CHECK_MS: '3600000',
  };
  const log = silentLogger();
  const db = createPool({ connectionString: url, max: 2, applicationName: 'ingest-bench-b4' });
  let projector: RunningProjector | null = null;
  let gateway: RunningGateway | null = null;
  let lag: LagMonitor | null = null;
  try {
    const bodyBytes = s.lines_per_request * 75;
    const kafkaP99 = await kafkaProbe(brokers, probeTopic, s.kafka_probe_messages, bodyBytes);
    say(`B4: kafka append p99 ${round(kafkaP99)} ms (${s.kafka_probe_messages} sequential ${Math.round(bodyBytes / 1024)} KiB appends)`);
    projector = await runProjector(env, log);
    gateway = await runGateway(env, log);
    const base = `http://127.0.0.1:${gateway.port}`;

    // Registry and catalogue: one location per shop, lines_per_request products per shop.
    const shops: Array<{ shop: string; location: string; barcodes: string[] }> = [];
    for (let i = 0; i < s.shops; i++) {
      const shop = `bench-e2e-${i}.myshop.example`;
      const loc = await postJson(`${base}/api/admin/locations`, JSON.stringify({ shop, locations: [{ name: `E2E-${i}` }] }));
      if (loc.status !== 200) throw new Error(`registering a location answered ${loc.status}: ${JSON.stringify(loc.json).slice(0, 300)}`);
      const location = (loc.json as { locations: Array<{ location_id: string }> }).locations[0]!.location_id;
      const barcodes = Array.from(
        { length: s.lines_per_request },
        (_, k) => `49${String(i).padStart(3, '0')}${String(k).padStart(8, '0')}`,
      );
      const pr = await postJson(
        `${base}/api/ingest/products`,
        JSON.stringify({ shop, products: barcodes.map((barcode, k) => ({ barcode, product_name: `E2E ${i}/${k}` })) }),
      );
      if (pr.status !== 200) throw new Error(`registering products answered ${pr.status}: ${JSON.stringify(pr.json).slice(0, 300)}`);
      shops.push({ shop, location, barcodes });
    }
    lag = await startLagMonitor(kafka, { groupId, topic: topics.commands, intervalMs: s.lag_sample_ms });

    let seq = 0;
    const bodyOf = (n: number): string => {
      const sh = shops[n % shops.length]!;
      return JSON.stringify({
        shop: sh.shop,
        source_system: 'bench-wms',
        location_id: sh.location,
        // Every request changes every line (values move with the request number).
        lines: sh.barcodes.map((barcode, k) => ({ barcode, on_hand_qty: ((n + k) % 97) + 1, available_qty: (n + k) % 89 })),
      });
    };
    // Warm-up: a few sequential requests (JIT, pools, group assignment).
    for (let w = 0; w < 2 * s.shops; w++) {
      const r = await postJson(`${base}/api/ingest/inventory-snapshot`, bodyOf(seq++));
      if (r.status !== 200) throw new Error(`warm-up snapshot answered ${r.status}: ${JSON.stringify(r.json).slice(0, 300)}`);
    }

    const rates: B4Rate[] = [];
    for (const fraction of s.fractions) {
      const offeredLines = capacity.lines_per_s * fraction;
      const reqPerS = offeredLines / s.lines_per_request;
      const interval = 1000 / reqPerS;
      const total = Math.max(1, Math.round(reqPerS * s.seconds_per_rate));
      const before = await processedCount(db);
      // Bodies prepared ahead so the generator's own JSON work does not skew the arrival times.
      const bodies = Array.from({ length: total }, () => bodyOf(seq++));
      const results: Array<{ status: number; ms: number }> = [];
      const pending: Array<Promise<void>> = [];
      const samples: Array<[number, number]> = [];
      let lagMax = 0;
      const t0 = performance.now();
      const sampler = setInterval(() => {
        const v = lag?.lag();
        if (v === null || v === undefined) return;
        lagMax = Math.max(lagMax, v);
        if (performance.now() - t0 <= s.seconds_per_rate * 1000) samples.push([(performance.now() - t0) / 1000, v]);
      }, s.lag_sample_ms);
      const fire = (i: number) => {
        const start = performance.now();
        pending.push(
          fetch(`${base}/api/ingest/inventory-snapshot`, { method: 'POST', headers: HEADERS, body: bodies[i]! })
            .then(async (res) => {
              await res.arrayBuffer();
              results.push({ status: res.status, ms: performance.now() - start });
            })
            .catch(() => {
              results.push({ status: 0, ms: performance.now() - start });
            }),
        );
      };
      // Open loop: request i is due at t0 + i·interval, whatever happened to the earlier ones.
      for (let i = 0; i < total;) {
        const now = performance.now() - t0;
        while (i < total && i * interval <= now) fire(i++);
        if (i < total) await sleep(Math.max(0, i * interval - (performance.now() - t0)));
      }
      const arrivalsEnd = performance.now();
      const drainDeadline = arrivalsEnd + s.drain_timeout_s * 1000;
      await Promise.race([Promise.all(pending), sleep(s.drain_timeout_s * 1000)]);
      let drained = false;
      const accepted = () => results.filter((r) => r.status === 200 || r.status === 202).length;
      let processed = 0;
      while (performance.now() < drainDeadline) {
        processed = (await processedCount(db)) - before;
        if (results.length === total && lag.lag() === 0 && processed >= accepted()) {
          drained = true;
          break;
        }
        await sleep(100);
      }
      const end = performance.now();
      clearInterval(sampler);
      processed = (await processedCount(db)) - before;
      const statuses: Record<string, number> = {};
      for (const r of results) statuses[String(r.status)] = (statuses[String(r.status)] ?? 0) + 1;
      const acc = accepted();
      const n202 = statuses['202'] ?? 0;
      const lat = results.filter((r) => r.status === 200).map((r) => r.ms);
      const wall = (end - t0) / 1000;
      const trend = slope(samples);
      const missing = Math.max(0, acc - processed);
      const lost = drained ? missing : null;
      // Flat lag: it grows by less than one request per sampled second over the arrival phase and stays
      // small against the number of requests offered in a second.
      const flat = trend < Math.max(1, reqPerS * 0.05) && lagMax <= Math.max(5, 2 * reqPerS);
      const rate: B4Rate = {
        fraction,
        offered_lines_per_s: round(offeredLines, 0),
        offered_requests_per_s: round(reqPerS, 2),
        requests: total,
        statuses,
        accepted_requests: acc,
        sustained_lines_per_s: round((processed * s.lines_per_request) / wall, 0),
        wall_seconds: round(wall, 2),
        drain_seconds: round((end - arrivalsEnd) / 1000, 2),
        p50_ms: round(percentile(lat, 50), 1),
        p95_ms: round(percentile(lat, 95), 1),
        p99_ms: round(percentile(lat, 99), 1),
        share_202: round(total ? n202 / total : 0, 4),
        count_429: statuses['429'] ?? 0,
        count_503: statuses['503'] ?? 0,
        other_errors: results.filter((r) => ![200, 202, 429, 503].includes(r.status)).length,
        lag_max: lagMax,
        lag_trend_per_s: round(trend, 3),
        lag_samples: samples.length,
        processed_commands: processed,
        lost,
        pending_at_timeout: drained ? 0 : missing,
        drained,
        pass: drained && flat && lost === 0 && acc === total,
      };
      rates.push(rate);
      say(
        `B4 ${fraction * 100}%: offered ${rate.offered_lines_per_s} lines/s, sustained ${rate.sustained_lines_per_s}, p50/p95/p99 ${rate.p50_ms}/${rate.p95_ms}/${rate.p99_ms} ms, statuses ${JSON.stringify(statuses)}, lag max ${lagMax} trend ${rate.lag_trend_per_s}/s, ${rate.pass ? 'pass' : 'FAIL'}`,
      );
      if (!drained) {
        say(`B4: backlog did not drain within ${s.drain_timeout_s} s; higher rates skipped`);
        break;
      }
    }

    const passing = rates.filter((r) => r.pass);
    const best = passing.reduce<B4Rate | null>((a, r) => (a && a.sustained_lines_per_s >= r.sustained_lines_per_s ? a : r), null);
    const half = rates.find((r) => r.fraction === 0.5) ?? null;
    const scaled = capacity.b1_p95_ms_10k === null ? null : round((capacity.b1_p95_ms_10k * s.lines_per_request) / 10_000, 2);
    return {
      settings: s,
      capacity_lines_per_s: capacity.lines_per_s,
      capacity_source: capacity.source,
      kafka_append_p99_ms: round(kafkaP99, 2),
      b1_projector_ms_scaled: scaled,
      rates,
      ratio_sustained: best ? round(best.sustained_lines_per_s / capacity.lines_per_s, 3) : 0,
      ratio_best_sustained_any: round(Math.max(0, ...rates.map((r) => r.sustained_lines_per_s)) / capacity.lines_per_s, 3),
      highest_passing_fraction: best?.fraction ?? null,
      p99_ms_at_half: half?.p99_ms ?? null,
      fallbacks_202_at_half: half ? (half.statuses['202'] ?? 0) : null,
      p99_bound_at_half_ms: scaled === null ? null : round(3 * (scaled + kafkaP99), 1),
    };
  } finally {
    await lag?.stop().catch(() => {});
    await gateway?.stop().catch(() => {});
    await projector?.stop().catch(() => {});
    await db.end().catch(() => {});
    const admin = kafka.admin();
    await admin.connect();
    await admin.deleteTopics({ topics: [...Object.values(topics), probeTopic] }).catch(() => {});
    await admin.disconnect();
  }
}
