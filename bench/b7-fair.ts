// B7 fair admission per shop: the real pipeline (b6-server.ts `pipeline`: runGateway
// + runProjector in a forked process), open-loop inventory snapshots. Phase `alone`: three quiet shops
// at a tenth of the pipeline's capacity each. Phase `with_noisy`: the same, plus one shop offering ten
// times the capacity. Phase `fair_share` (the control): the same fourth shop offering only its share, a
// tenth, as the quiet ones do: what the noisy shop's admitted quota costs the others by itself, without
// its refusals. The phases alternate for a few rounds (the machine is shared: what else runs on it
// changes over minutes, and every phase should see the same). The quiet shops' p99 with the noisy shop
// and alone is compared (target: within 1.5×), and every answer the noisy shop got must be 200/202 or
// 429 with Retry-After (never a 5xx).
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Agent } from 'node:http';
import { setPriority } from 'node:os';
import { fileURLToPath } from 'node:url';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createKafka, ensureTopics, partitionForKey, topicPlan, type TopicNames } from '@ingest/kafka';
import { post, SECRET, SNAPSHOT } from './b6-e2e.ts';
import { createBenchDatabase } from './lib/db.ts';
import { ServerProcess } from './lib/serverProcess.ts';
import type { NoisyReport, NoisyRun } from './b7-noisy.ts';
import { busyShareSince, machineCpu, percentile, round, say, sleep } from './lib/util.ts';
import type { TimedSpan } from './lib/spanLog.ts';

/** BENCH_B7_TRACE=1: the measured server traces every request, and each round names where its slowest quiet answers spent their time. */
const TRACE = process.env['BENCH_B7_TRACE'] === '1';

export interface B7Settings {
  lines_per_request: number;
  /** Length of each phase in a round; the first `warmup_seconds` of each are not counted. */
  seconds: number;
  /** Rounds of the phases, alternating (alone, fair_share, with_noisy, alone, …). */
  rounds: number;
  warmup_seconds: number;
  quiet_shops: number;
  /** Lines/s each quiet shop offers, as a fraction of the capacity. */
  quiet_fraction: number;
  /** Lines/s the noisy shop offers, as a multiple of the capacity. */
  noisy_factor: number;
  partitions: number;
  /** Closed-loop clients and window of the capacity probe (`capacity_seconds` after `warmup_seconds`). */
  capacity_clients: number;
  capacity_seconds: number;
  /** SHOP_RATE_LINES_PER_S of the gateway, as a fraction of the capacity. */
  shop_rate_fraction: number;
  drain_timeout_s: number;
  /**
   * The noisy client's niceness (BENCH_B7_NOISY_NICE). It stands for another retailer's machine but
   * runs on the server's two cores; at a lower priority it still sends everything it offers (the
   * machine is not saturated) while the server's processes are scheduled first, as they would be
   * were that machine elsewhere. 0: the same priority as the server.
   */
  noisy_nice: number;
  /**
   * `split`: the gateway and the projector in processes of their own, as deployed (deploy/k8s);
   * `one_process`: both in one process, as `npm start` runs them (one event loop for both).
   */
  topology: 'split' | 'one_process';
  /**
   * BENCH_B7_CAPACITY: lines/s taken as the capacity instead of probing it, so that runs of two
   * commits compare at the same load (the probe moves by a factor of two over a day here). 0: probe.
   */
  fixed_capacity: number;
}

const PHASES = ['alone', 'fair_share', 'with_noisy'] as const;
type PhaseName = (typeof PHASES)[number];

interface Sample {
  role: 'quiet' | 'noisy';
  shop: string;
  /** Seconds since the phase started, when the request was due. */
  at: number;
  status: number;
  ms: number;
  retryAfter: string | null;
  /** BENCH_B7_TRACE: the trace id the request carried (its `traceparent`). */
  traceId?: string;
}

export interface B7Side {
  requests: number;
  statuses: Record<string, number>;
  p50_ms: number;
  p95_ms: number;
  p99_ms: number;
  max_ms: number;
  /** Lines of the 200 answers per second of the counted window. */
  accepted_lines_per_s: number;
}

export interface B7Phase {
  name: PhaseName;
  /** Quiet p99 of each round's run of this phase. */
  quiet_p99_ms_by_round: number[];
  quiet: B7Side & { p99_ms_by_shop: Record<string, number> };
  noisy:
    | (B7Side & {
        count_429: number;
        count_429_with_retry_after: number;
        count_5xx: number;
        other: number;
        retry_after_s: { min: number; max: number } | null;
      })
    | null;
  server_event_loop_p99_ms: number;
  server_cpu_ms: number;
  /** CPU the noisy client process took (it runs on the same machine as the server); 0 alone. */
  noisy_client_cpu_ms: number;
  /** Share of the whole machine's CPU (all cores) busy during each round's run of this phase. */
  machine_busy_by_round: number[];
}

export interface B7Result {
  settings: B7Settings;
  capacity_lines_per_s: number;
  capacity_source: string;
  /** B6's pipeline saturation figure, for comparison (null when unknown). */
  b6_capacity_lines_per_s: number | null;
  shop_rate_lines_per_s: number;
  shop_burst_lines: number;
  shops: Array<{ shop: string; partition: number; role: 'quiet' | 'noisy' }>;
  phases: B7Phase[];
  /** Quiet shops' p99 with the noisy shop / without it. */
  p99_ratio: number | null;
  /** Quiet shops' p99 beside a fourth shop sending only its share / without it (the control). */
  p99_ratio_fair_share: number | null;
  /** Quiet shops' p99 beside the noisy shop / beside the same shop sending only its share: what its refusals cost. */
  p99_ratio_noisy_vs_fair_share: number | null;
  /** Every answer of the noisy shop was 200/202 or a 429 with Retry-After. */
  noisy_only_429_with_retry_after: boolean;
}

function side(samples: Sample[], linesPerRequest: number, windowS: number): B7Side {
  const statuses: Record<string, number> = {};
  for (const x of samples) statuses[String(x.status)] = (statuses[String(x.status)] ?? 0) + 1;
  const ok = samples.filter((x) => x.status === 200).map((x) => x.ms);
  return {
    requests: samples.length,
    statuses,
    p50_ms: round(percentile(ok, 50), 1),
    p95_ms: round(percentile(ok, 95), 1),
    p99_ms: round(percentile(ok, 99), 1),
    max_ms: round(Math.max(0, ...ok), 1),
    accepted_lines_per_s: round((ok.length * linesPerRequest) / windowS, 0),
  };
}

export async function runB7(s: B7Settings, brokers: string[], id: string, b6Capacity: number | null): Promise<B7Result> {
  const topics: TopicNames = {
    commands: `bench.${id}.b7.commands`,
    audit: `bench.${id}.b7.audit`,
    stockZero: `bench.${id}.b7.stock-zero`,
    stockRestored: `bench.${id}.b7.stock-restored`,
  };
  const kafka = createKafka({ brokers, clientId: `ingest-bench-b7-${id}` });
  await ensureTopics(kafka, topicPlan(topics, s.partitions));
  const url = await createBenchDatabase('ingest_bench_b7');
  let server: Pipeline | null = null;
  const setupAgent = new Agent({ keepAlive: true, maxSockets: 2 });
  const quietAgent = new Agent({ keepAlive: true, maxSockets: 64 });
  try {
    const serverEnv = {
      DATABASE_URL: url,
      KAFKA_BROKERS: brokers.join(','),
      COMMANDS_TOPIC: topics.commands,
      AUDIT_TOPIC: topics.audit,
      STOCK_ZERO_TOPIC: topics.stockZero,
      STOCK_RESTORED_TOPIC: topics.stockRestored,
      PROJECTOR_GROUP_ID: `bench-${id}-b7-projector`,
      INGEST_SECRET: SECRET,
      PORT: '0',
      HOST: '127.0.0.1',
      DAILY_SNAPSHOT_CHECK_MS: '3600000',
    };
    const script = fileURLToPath(new URL('./b6-server.ts', import.meta.url));
    // First without per-shop limits: set up the shops and measure the capacity.
    server = await startPipeline(s.topology, script, {
      ...serverEnv,
      SHOP_RATE_LINES_PER_S: '1000000000',
      SHOP_BURST_LINES: '1000000000',
    });
    let port = server.port;
    const call = async (path: string, body: unknown): Promise<unknown> => {
      const r = await post(setupAgent, port, path, JSON.stringify(body));
      if (r.status !== 200) throw new Error(`B7: ${path} answered ${r.status}: ${r.text.slice(0, 300)}`);
      return JSON.parse(r.text) as unknown;
    };

    // The noisy shop and the quiet ones each on a partition of their own: what is measured is admission,
    // not two shops sharing one partition's order (D2).
    const shops: B7Result['shops'] = [];
    for (let i = 0; shops.length < s.quiet_shops + 1 && i < 200; i++) {
      const shop = `bench-b7-${i}.myshop.example`;
      const partition = partitionForKey(shop, s.partitions);
      if (shops.some((x) => x.partition === partition) && shops.length < s.partitions) continue;
      shops.push({ shop, partition, role: shops.length === 0 ? 'noisy' : 'quiet' });
    }
    const VARIANTS = 31;
    const bodies = new Map<string, string[]>();
    for (const [i, x] of shops.entries()) {
      const loc = (await call('/api/admin/locations', { shop: x.shop, locations: [{ name: `B7-${i}` }] })) as {
        locations: Array<{ location_id: string }>;
      };
      const location = loc.locations[0]!.location_id;
      const barcodes = Array.from(
        { length: s.lines_per_request },
        (_, k) => `48${String(i).padStart(3, '0')}${String(k).padStart(8, '0')}`,
      );
      await call('/api/ingest/products', {
        shop: x.shop,
        products: barcodes.map((barcode, k) => ({ barcode, product_name: `B7 ${i}/${k}` })),
      });
      // Every request changes every line (values move with the request number, mod VARIANTS).
      bodies.set(
        x.shop,
        Array.from({ length: VARIANTS }, (_, n) =>
          JSON.stringify({
            shop: x.shop,
            source_system: 'bench-wms',
            location_id: location,
            lines: barcodes.map((barcode, k) => ({ barcode, on_hand_qty: ((n + k) % 97) + 1, available_qty: (n + k) % 89 })),
          }),
        ),
      );
    }
    say(`B7: shops ${shops.map((x) => `${x.shop} (${x.role}, partition ${x.partition})`).join(', ')}`);
    const sent = new Map<string, number>();
    // Encoded once (the load generator shares the machine with the server, and is not what is measured).
    const encoded = new Map([...bodies].map(([shop, list]) => [shop, list.map((b) => Buffer.from(b))]));
    const bodyOf = (shop: string): Buffer => {
      const n = (sent.get(shop) ?? 0) + 1;
      sent.set(shop, n);
      return encoded.get(shop)![n % VARIANTS]!;
    };
    const warmUp = async (): Promise<void> => {
      for (let w = 0; w < 2; w++)
        for (const x of shops) {
          const r = await post(setupAgent, port, SNAPSHOT, bodyOf(x.shop));
          if (r.status !== 200) throw new Error(`B7 warm-up answered ${r.status}: ${r.text.slice(0, 300)}`);
        }
    };
    await warmUp();

    // The capacity, measured here on the machine as it is now (it is shared, and what else runs changes
    // it): a closed loop over the four shops at saturation, lines of the 200 answers per second.
    const capacityLines =
      s.fixed_capacity > 0
        ? s.fixed_capacity
        : await (async () => {
            const agent = new Agent({ keepAlive: true, maxSockets: s.capacity_clients });
            const t0 = performance.now();
            const from = s.warmup_seconds * 1000;
            const until = from + s.capacity_seconds * 1000;
            let lines = 0;
            await Promise.all(
              Array.from({ length: s.capacity_clients }, async (_, c) => {
                const shop = shops[c % shops.length]!.shop;
                while (performance.now() - t0 < until) {
                  const r = await post(agent, port, SNAPSHOT, bodyOf(shop));
                  const at = performance.now() - t0;
                  if (r.status === 200 && at >= from && at < until) lines += s.lines_per_request;
                }
              }),
            );
            agent.destroy();
            return Math.round(lines / s.capacity_seconds);
          })();
    const capacity = {
      lines_per_s: capacityLines,
      source:
        s.fixed_capacity > 0
          ? 'given (BENCH_B7_CAPACITY), not measured'
          : `measured by B7: closed loop, ${s.capacity_clients} clients over ${shops.length} shops, ${s.capacity_seconds} s`,
    };
    const rate = Math.max(1, Math.round(capacity.lines_per_s * s.shop_rate_fraction));
    // One second of the shop's rate, and never less than two requests.
    const burst = Math.max(rate, 2 * s.lines_per_request);
    say(
      `B7: capacity ${capacityLines} lines/s (B6: ${b6Capacity ?? 'not known'}); gateway restarted with SHOP_RATE_LINES_PER_S ${rate}, SHOP_BURST_LINES ${burst}`,
    );
    await server.stop();
    // BENCH_B7_CPU_PROF_DIR: a V8 CPU profile of the measured server (for bench/profile-summary.ts).
    const prof = process.env['BENCH_B7_CPU_PROF_DIR'];
    const execArgv = prof ? ['--cpu-prof', '--cpu-prof-dir', prof, '--cpu-prof-interval', '1000'] : [];
    server = await startPipeline(
      s.topology,
      script,
      { ...serverEnv, SHOP_RATE_LINES_PER_S: String(rate), SHOP_BURST_LINES: String(burst), ...(TRACE ? { BENCH_TRACE: '1' } : {}) },
      execArgv,
    );
    port = server.port;
    await warmUp();
    await sleep(Math.ceil((1000 * burst) / rate));

    const quietRate = capacity.lines_per_s * s.quiet_fraction;
    const noisyRate = capacity.lines_per_s * s.noisy_factor;
    type Run = { samples: Sample[]; p99s: number[]; eventLoopP99: number; cpuMs: number; noisyCpuMs: number; busy: number[] };
    const newRun = (): Run => ({ samples: [], p99s: [], eventLoopP99: 0, cpuMs: 0, noisyCpuMs: 0, busy: [] });
    const runs: Record<PhaseName, Run> = { alone: newRun(), fair_share: newRun(), with_noisy: newRun() };
    for (let k = 0; k < s.rounds; k++)
      for (const name of PHASES) {
        const streams = shops
          .filter((x) => x.role === 'quiet')
          .map((x) => ({ ...x, intervalMs: (1000 * s.lines_per_request) / quietRate, next: 0 }));
        // Quiet streams start out of step with each other.
        streams.forEach((st, k) => (st.next = (k * st.intervalMs) / streams.length));
        const samples: Sample[] = [];
        const pending: Array<Promise<void>> = [];
        // The noisy shop is a client process of its own (b7-noisy.ts), as another retailer would be.
        const noisyShop = shops.find((x) => x.role === 'noisy')!.shop;
        const noisy =
          name !== 'alone'
            ? await NoisyClient.start(
                {
                  type: 'run',
                  port,
                  path: SNAPSHOT,
                  bodies: bodies.get(noisyShop)!,
                  intervalMs: (1000 * s.lines_per_request) / (name === 'with_noisy' ? noisyRate : quietRate),
                  seconds: s.seconds,
                  maxSockets: 256,
                },
                s.noisy_nice,
              )
            : null;
        await server.reset();
        noisy?.go();
        const cpuAtStart = machineCpu();
        // The load generator's own event loop: a stall here (this process not scheduled on a busy
        // machine) delays the quiet requests' sending and reading, and counts in their latency.
        const clientLoop = monitorEventLoopDelay({ resolution: 10 });
        clientLoop.enable();
        const t0 = performance.now();
        const end = s.seconds * 1000;
        // Open loop: each stream's request k is due at its offset + k·interval, whatever the answers.
        for (;;) {
          const now = performance.now() - t0;
          for (const st of streams) {
            while (st.next <= now && st.next < end) {
              const due = st.next;
              st.next += st.intervalMs;
              const traceId = TRACE ? randomBytes(16).toString('hex') : undefined;
              const headers: Record<string, string> = traceId ? { traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` } : {};
              pending.push(
                post(quietAgent, port, SNAPSHOT, bodyOf(st.shop), headers).then(
                  (r) =>
                    void samples.push({
                      role: st.role,
                      shop: st.shop,
                      at: due / 1000,
                      status: r.status,
                      ms: performance.now() - t0 - due,
                      retryAfter: r.headers['retry-after'] ?? null,
                      ...(traceId ? { traceId } : {}),
                    }),
                  () =>
                    void samples.push({
                      role: st.role,
                      shop: st.shop,
                      at: due / 1000,
                      status: 0,
                      ms: performance.now() - t0 - due,
                      retryAfter: null,
                    }),
                ),
              );
            }
          }
          const soonest = Math.min(...streams.map((st) => st.next));
          if (soonest >= end) break;
          await sleep(Math.max(0, soonest - (performance.now() - t0)));
        }
        // Every answer is in (the backlog of the run drained) before the next run starts.
        await Promise.race([Promise.all(pending), sleep(s.drain_timeout_s * 1000)]);
        const busy = busyShareSince(cpuAtStart);
        clientLoop.disable();
        const clientLoopMaxMs = round(clientLoop.max / 1e6, 1);
        const report = noisy ? await noisy.report(s.drain_timeout_s * 1000) : null;
        for (const x of report?.samples ?? []) samples.push({ role: 'noisy', shop: noisyShop, ...x });
        const stats = await server.stats();
        const run = runs[name];
        run.busy.push(round(busy, 2));
        run.noisyCpuMs += report?.cpu_ms ?? 0;
        run.samples.push(...samples);
        const quietOk = samples.filter((x) => x.role === 'quiet' && x.at >= s.warmup_seconds && x.status === 200).map((x) => x.ms);
        run.p99s.push(round(percentile(quietOk, 99), 1));
        run.eventLoopP99 = Math.max(run.eventLoopP99, stats.event_loop_delay_ms.p99);
        run.cpuMs += stats.cpu_ms;
        const noisyAll = samples.filter((x) => x.role === 'noisy');
        say(
          `B7 round ${k + 1} ${name}: quiet p50/p99 ${round(percentile(quietOk, 50), 1)}/${run.p99s.at(-1)} ms over ${quietOk.length} answers; machine ${Math.round(busy * 100)} % busy; server event loop p99/max ${stats.event_loop_delay_ms.p99}/${stats.event_loop_delay_ms.max} ms, the quiet client's max ${clientLoopMaxMs} ms, GC longest/total ${stats.gc_ms.max}/${stats.gc_ms.total} ms` +
            (noisyAll.length ? `; noisy ${JSON.stringify(side(noisyAll, s.lines_per_request, s.seconds).statuses)}` : '') +
            // When the slowest quiet answers were due (s into the phase): together, or spread out.
            `; slowest quiet ${samples
              .filter((x) => x.role === 'quiet' && x.at >= s.warmup_seconds && x.status === 200)
              .sort((a, b) => b.ms - a.ms)
              .slice(0, 5)
              .map((x) => `${Math.round(x.ms)} ms at ${round(x.at, 1)} s`)
              .join(', ')}`,
        );
        if (TRACE) {
          const spans = await server.spans();
          const slowest = samples
            .filter((x) => x.role === 'quiet' && x.at >= s.warmup_seconds && x.status === 200)
            .sort((a, b) => b.ms - a.ms)
            .slice(0, 5);
          for (const line of explainSlow(slowest, spans, performance.timeOrigin + t0)) say(`B7 round ${k + 1} ${name}: ${line}`);
          say(
            `B7 round ${k + 1} ${name}: steps of every quiet answer, p50/p95/p99 ms: ${stepPercentiles(
              samples.filter((x) => x.role === 'quiet' && x.at >= s.warmup_seconds && x.status === 200),
              spans,
              performance.timeOrigin + t0,
            )}`,
          );
        }
        await sleep(1000);
      }

    const windowS = s.rounds * (s.seconds - s.warmup_seconds);
    const phases: B7Phase[] = PHASES.map((name) => {
      const run = runs[name];
      const counted = run.samples.filter((x) => x.at >= s.warmup_seconds);
      const quiet = counted.filter((x) => x.role === 'quiet');
      const noisy = counted.filter((x) => x.role === 'noisy');
      const byShop: Record<string, number> = {};
      for (const x of shops.filter((y) => y.role === 'quiet'))
        byShop[x.shop] = round(
          percentile(
            quiet.filter((q) => q.shop === x.shop && q.status === 200).map((q) => q.ms),
            99,
          ),
          1,
        );
      // Every answer of the noisy shop, warm-up included, for its statuses.
      const noisyAll = run.samples.filter((x) => x.role === 'noisy');
      const retry = noisyAll.filter((x) => x.status === 429 && x.retryAfter !== null).map((x) => Number(x.retryAfter));
      const phase: B7Phase = {
        name,
        quiet_p99_ms_by_round: run.p99s,
        quiet: { ...side(quiet, s.lines_per_request, windowS), p99_ms_by_shop: byShop },
        noisy: noisyAll.length
          ? {
              ...side(noisy, s.lines_per_request, windowS),
              statuses: side(noisyAll, s.lines_per_request, windowS).statuses,
              requests: noisyAll.length,
              count_429: noisyAll.filter((x) => x.status === 429).length,
              count_429_with_retry_after: retry.length,
              count_5xx: noisyAll.filter((x) => x.status >= 500 || x.status === 0).length,
              other: noisyAll.filter((x) => ![200, 202, 429].includes(x.status)).length,
              retry_after_s: retry.length ? { min: Math.min(...retry), max: Math.max(...retry) } : null,
            }
          : null,
        server_event_loop_p99_ms: run.eventLoopP99,
        server_cpu_ms: run.cpuMs,
        noisy_client_cpu_ms: run.noisyCpuMs,
        machine_busy_by_round: run.busy,
      };
      say(
        `B7 ${name}: quiet p50/p95/p99 ${phase.quiet.p50_ms}/${phase.quiet.p95_ms}/${phase.quiet.p99_ms} ms over ${phase.quiet.requests} requests ${JSON.stringify(phase.quiet.statuses)}` +
          (phase.noisy
            ? `; noisy ${JSON.stringify(phase.noisy.statuses)}, 429 with Retry-After ${phase.noisy.count_429_with_retry_after}/${phase.noisy.count_429}, admitted ${phase.noisy.accepted_lines_per_s} lines/s`
            : ''),
      );
      return phase;
    });
    const [alone, fairShare, withNoisy] = phases;
    const n = withNoisy?.noisy;
    const ratio = (a: B7Phase | undefined, b: B7Phase | undefined): number | null =>
      a && b && b.quiet.p99_ms > 0 ? round(a.quiet.p99_ms / b.quiet.p99_ms, 3) : null;
    return {
      settings: s,
      capacity_lines_per_s: capacity.lines_per_s,
      capacity_source: capacity.source,
      b6_capacity_lines_per_s: b6Capacity,
      shop_rate_lines_per_s: rate,
      shop_burst_lines: burst,
      shops,
      phases,
      p99_ratio: ratio(withNoisy, alone),
      p99_ratio_fair_share: ratio(fairShare, alone),
      p99_ratio_noisy_vs_fair_share: ratio(withNoisy, fairShare),
      noisy_only_429_with_retry_after: !!n && n.other === 0 && n.count_429 === n.count_429_with_retry_after && n.count_429 > 0,
    };
  } finally {
    setupAgent.destroy();
    quietAgent.destroy();
    await server?.stop().catch(() => {});
    const admin = kafka.admin();
    await admin.connect();
    await admin.deleteTopics({ topics: Object.values(topics) }).catch(() => {});
    await admin.disconnect();
  }
}

interface ServerStats {
  event_loop_delay_ms: { p99: number; max: number };
  cpu_ms: number;
  gc_ms: { max: number; total: number };
}

/** The pipeline under test: one process, or a gateway process and a projector process. */
interface Pipeline {
  port: number;
  reset(): Promise<void>;
  /** Event loop and GC: the worst of the processes; CPU: their sum. */
  stats(): Promise<ServerStats>;
  spans(): Promise<TimedSpan[]>;
  stop(): Promise<void>;
}

async function startPipeline(
  topology: B7Settings['topology'],
  script: string,
  env: NodeJS.ProcessEnv,
  execArgv: string[] = [],
): Promise<Pipeline> {
  const procs: ServerProcess[] = [];
  if (topology === 'one_process') procs.push(await ServerProcess.start(script, ['pipeline'], env, execArgv));
  else {
    // The gateway first in the list: it is stopped first, and its port is the pipeline's.
    const projector = await ServerProcess.start(script, ['projector'], env, execArgv);
    procs.push(await ServerProcess.start(script, ['gateway'], env, execArgv), projector);
  }
  return {
    port: procs[0]!.port,
    reset: async () => void (await Promise.all(procs.map((p) => p.ask('reset')))),
    stats: async () => {
      const all = await Promise.all(procs.map((p) => p.ask<ServerStats>('stats')));
      return {
        event_loop_delay_ms: {
          p99: Math.max(...all.map((x) => x.event_loop_delay_ms.p99)),
          max: Math.max(...all.map((x) => x.event_loop_delay_ms.max)),
        },
        cpu_ms: all.reduce((a, x) => a + x.cpu_ms, 0),
        gc_ms: { max: Math.max(...all.map((x) => x.gc_ms.max)), total: all.reduce((a, x) => a + x.gc_ms.total, 0) },
      };
    },
    spans: async () => (await Promise.all(procs.map((p) => p.ask<{ value: TimedSpan[] }>('spans')))).flatMap((x) => x.value),
    stop: async () => {
      for (const p of procs) await p.stop();
    },
  };
}

/** The noisy shop's client process (b7-noisy.ts). */
class NoisyClient {
  private readonly child: ChildProcess;
  /** Listened for from the start: a client that finishes before report() is called (fair_share) is not missed. */
  private readonly finished: Promise<NoisyReport>;

  private constructor(child: ChildProcess) {
    this.child = child;
    this.finished = new Promise((resolve) => child.once('message', (m: NoisyReport) => resolve(m)));
  }

  static async start(run: NoisyRun, nice: number): Promise<NoisyClient> {
    const child = fork(fileURLToPath(new URL('./b7-noisy.ts', import.meta.url)), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    if (nice !== 0 && child.pid !== undefined) setPriority(child.pid, nice);
    await new Promise<void>((resolve, reject) => {
      child.once('message', () => resolve());
      child.once('exit', (code) => reject(new Error(`b7-noisy.ts exited with ${code}`)));
      child.send(run);
    });
    return new NoisyClient(child);
  }

  go(): void {
    this.child.send({ type: 'go' });
  }

  async report(timeoutMs: number): Promise<NoisyReport> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        this.child.kill('SIGKILL');
        reject(new Error('B7: the noisy client did not finish'));
      }, timeoutMs);
    });
    try {
      return await Promise.race([this.finished, late]);
    } finally {
      clearTimeout(timer);
    }
  }
}

/** The server's spans by trace id. */
function byTraceId(spans: TimedSpan[]): Map<string, TimedSpan[]> {
  const out = new Map<string, TimedSpan[]>();
  for (const x of spans) {
    const list = out.get(x.traceId);
    if (list) list.push(x);
    else out.set(x.traceId, [x]);
  }
  return out;
}

/** An answer's due time (epoch ms) and its request, append and apply spans. */
function answerSpans(x: Sample, byTrace: Map<string, TimedSpan[]>, phaseStart: number) {
  const mine = byTrace.get(x.traceId ?? '') ?? [];
  return {
    due: phaseStart + x.at * 1000,
    http: mine.find((y) => y.name.startsWith('POST')),
    send: mine.find((y) => y.name.startsWith('send ')),
    apply: mine.find((y) => y.name.startsWith('apply ')),
  };
}

/** Milliseconds from `a` to `b`, or undefined where a span is missing. */
const between = (a: number | undefined, b: number | undefined): number | undefined =>
  a === undefined || b === undefined ? undefined : b - a;

/** The steps of one answer (ms), as explainSlow names them. */
function stepsOf(x: Sample, byTrace: Map<string, TimedSpan[]>, phaseStart: number): Record<string, number | undefined> {
  const { due, http, send, apply } = answerSpans(x, byTrace, phaseStart);
  return {
    to_request: between(due, http?.start),
    to_append: between(http?.start, send?.start),
    append: between(send?.start, send?.end),
    to_apply: between(send?.end, apply?.start),
    apply: between(apply?.start, apply?.end),
    to_answer: between(apply?.end, http?.end),
    to_client: between(http?.end, due + x.ms),
  };
}

/** BENCH_B7_TRACE: each step's p50/p95/p99 over every answer given, so a phase's extra latency shows where it is. */
function stepPercentiles(answers: Sample[], spans: TimedSpan[], phaseStart: number): string {
  const byTrace = byTraceId(spans);
  const cols = new Map<string, number[]>();
  for (const x of answers)
    for (const [k, v] of Object.entries(stepsOf(x, byTrace, phaseStart))) if (v !== undefined) cols.set(k, [...(cols.get(k) ?? []), v]);
  return [...cols].map(([k, v]) => `${k} ${[50, 95, 99].map((q) => round(percentile(v, q), 1)).join('/')}`).join(', ');
}

/**
 * BENCH_B7_TRACE: where each slow answer's time went, from the server's spans (epoch ms; the client's
 * due time is `phaseStart` + its offset): sent → request span (accept, read), → append, append,
 * → apply (the member's fetch, or its queue behind another partition's batch), the transaction it was
 * applied in, → answer (commit, NOTIFY, reply). Then every transaction over 100 ms near them.
 */
function explainSlow(slow: Sample[], spans: TimedSpan[], phaseStart: number): string[] {
  const byTrace = byTraceId(spans);
  const bySpan = new Map(spans.map((x) => [x.spanId, x]));
  const out: string[] = [];
  let from = Infinity;
  let to = -Infinity;
  for (const x of slow) {
    const { due, send, apply } = answerSpans(x, byTrace, phaseStart);
    const steps = stepsOf(x, byTrace, phaseStart);
    const group = apply?.links.map((id) => bySpan.get(id)).find((y) => y?.name === 'apply group');
    const ms = (v: number | undefined): string => (v === undefined ? '?' : String(Math.round(v)));
    from = Math.min(from, due);
    to = Math.max(to, due + x.ms);
    out.push(
      `slow ${Math.round(x.ms)} ms at ${round(x.at, 1)} s (${x.shop}): to request ${ms(steps['to_request'])}, to append ${ms(steps['to_append'])}, append ${ms(steps['append'])}, to apply ${ms(steps['to_apply'])}` +
        (group
          ? ` (group of ${group.groupCommands} began ${ms(between(send?.end, group.start))} after the append, took ${ms(between(group.start, group.end))})`
          : '') +
        `, apply ${ms(steps['apply'])}, to answer ${ms(steps['to_answer'])}, to client ${ms(steps['to_client'])}`,
    );
  }
  const txs = spans.filter(
    (y) =>
      (y.name === 'apply group' || (y.name.startsWith('apply ') && y.commandId)) &&
      y.end - y.start > 100 &&
      y.end >= from - 2000 &&
      y.start <= to,
  );
  for (const y of txs)
    out.push(
      `  ${y.name}${y.groupCommands ? ` (${y.groupCommands})` : ''} ${Math.round(y.end - y.start)} ms from ${round((y.start - phaseStart) / 1000, 2)} s`,
    );
  return out;
}
