// B10 an in-place rebuild under live load: the pipeline as `npm start` runs it (b6-server.ts
// `pipeline`) on a Kafka broker of its own, a large command log (B9's mix) projected live first; then
// snapshots of several shops, open loop at half the capacity measured here, for a fixed time without a
// rebuild (`baseline`), again while the operator's `replay` rebuilds the whole log in place and swaps
// (`rebuild`), and once more without (`baseline_after`: the machine is shared, and a baseline on both
// sides shows how much it drifted). Then nothing lost (b10-verify.ts) and the rebuilt read model
// equal to a fresh projection (`replay --into scratch` of the same log, compared table by table).
import { rmSync } from 'node:fs';
import { Agent } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createPool, projectorCheckpoints, type Pool } from '@ingest/db';
import { REPO_ROOT, startKafkaBroker } from '@ingest/devstack';
import { createKafka, ensureTopics, topicPlan, type TopicNames } from '@ingest/kafka';
import { compareReadModels } from '@ingest/operator';
import { SECRET } from './b6-e2e.ts';
import { answersAround, bodyCycle, openLoop, phaseStats, probeCapacity, setUpShops, statsOf, type Answer } from './b10-load.ts';
import { runReplayCli, type ReplayCliRun } from './b10-replay.ts';
import { checkNothingLost } from './b10-verify.ts';
import { createBenchDatabase } from './lib/db.ts';
import { ServerProcess } from './lib/serverProcess.ts';
import { busyShareSince, machineCpu, round, say, sleep } from './lib/util.ts';
import { writeCommandLog } from './lib/writeCommandLog.ts';
import type { B10Phase, B10Result, B10Settings } from './b10-result.ts';

export type { B10Result, B10Settings } from './b10-result.ts';

const topicsOf = (id: string): TopicNames => ({
  commands: `bench.${id}.b10.commands`,
  audit: `bench.${id}.b10.audit`,
  stockZero: `bench.${id}.b10.stock-zero`,
  stockRestored: `bench.${id}.b10.stock-restored`,
});

/** Waits until the live projector's checkpoints reach the end of the commands topic. */
async function caughtUp(pool: Pool, kafka: ReturnType<typeof createKafka>, topic: string, timeoutS: number): Promise<number> {
  const admin = kafka.admin();
  await admin.connect();
  const t0 = performance.now();
  try {
    for (let k = 0; ; k++) {
      const ends = await admin.fetchTopicOffsets(topic);
      const live = await projectorCheckpoints.livePositions(pool, topic);
      const behind = ends.reduce((a, e) => a + Math.max(0, Number(e.high) - (live.get(e.partition) ?? 0)), 0);
      if (behind === 0) return (performance.now() - t0) / 1000;
      if (k % 15 === 0) say(`B10: live projector ${behind.toLocaleString('en-US')} commands behind`);
      if (performance.now() - t0 > timeoutS * 1000)
        throw new Error(`B10: the live projector is ${behind} commands behind after ${timeoutS} s`);
      await sleep(1000);
    }
  } finally {
    await admin.disconnect();
  }
}

export async function runB10(s: B10Settings, id: string): Promise<B10Result> {
  const dataDir = join(REPO_ROOT, '.data', 'kafka-bench-b10');
  rmSync(dataDir, { recursive: true, force: true });
  say(`B10: starting a Kafka broker of its own on 127.0.0.1:${s.kafka_port}`);
  const broker = await startKafkaBroker({
    dataDir,
    port: s.kafka_port,
    controllerPort: s.controller_port,
    log: (m) => say(`B10 kafka: ${m}`),
  });
  const topics = topicsOf(id);
  const kafka = createKafka({ brokers: broker.brokers, clientId: `ingest-bench-b10-${id}` });
  const setupAgent = new Agent({ keepAlive: true, maxSockets: 2 });
  const loadAgent = new Agent({ keepAlive: true, maxSockets: 64 });
  let server: ServerProcess | null = null;
  let pool: Pool | null = null;
  try {
    await ensureTopics(kafka, topicPlan(topics, s.partitions, { replicationFactor: 1, minInsyncReplicas: 1 }));
    const log = await writeCommandLog(kafka, {
      topic: topics.commands,
      commands: s.commands,
      shape: { shops: s.shops, locations: s.locations, products: s.products, prefix: `bench-b10-${id}` },
      tag: 'B10',
    });
    const url = await createBenchDatabase('ingest_bench_b10');
    pool = createPool({ connectionString: url, max: 2, applicationName: 'ingest-bench-b10' });
    const kafkaEnv = { KAFKA_BROKERS: broker.brokers.join(','), KAFKA_REPLICATION_FACTOR: '1', KAFKA_MIN_INSYNC_REPLICAS: '1' };
    const env = {
      ...kafkaEnv,
      DATABASE_URL: url,
      COMMANDS_TOPIC: topics.commands,
      AUDIT_TOPIC: topics.audit,
      STOCK_ZERO_TOPIC: topics.stockZero,
      STOCK_RESTORED_TOPIC: topics.stockRestored,
      PROJECTOR_GROUP_ID: `bench-${id}-b10-projector`,
      INGEST_SECRET: SECRET,
      PORT: '0',
      HOST: '127.0.0.1',
      DAILY_SNAPSHOT_CHECK_MS: '3600000',
    };
    server = await ServerProcess.start(fileURLToPath(new URL('./b6-server.ts', import.meta.url)), ['pipeline'], env);
    const port = server.port;
    say(`B10: pipeline on port ${port}; the live projector projects the log`);
    const catchUp = await caughtUp(pool, kafka, topics.commands, s.catch_up_timeout_s);
    say(`B10: caught up in ${catchUp.toFixed(1)} s (${Math.round(s.commands / catchUp)} commands/s)`);

    const shops = await setUpShops({ ...s, tag: 'b10-load' }, port, setupAgent);
    const all: Answer[] = [];
    const bodyOf = bodyCycle();
    const load = { port, agent: loadAgent, shops, linesPerRequest: s.lines_per_request, bodyOf };
    for (let w = 0; w < 2; w++) all.push(...(await openLoop({ ...load, stop: (ms) => ms > 2000, drainMs: 30_000 })));
    const capacity =
      s.fixed_capacity > 0
        ? { lines_per_s: s.fixed_capacity, source: 'given (BENCH_B10_CAPACITY), not measured' }
        : await probeCapacity({ ...load, clients: s.capacity_clients, warmupS: 2, seconds: s.capacity_seconds }).then((r) => {
            all.push(...r.answers);
            return {
              lines_per_s: r.lines_per_s,
              source: `closed loop, ${s.capacity_clients} clients over ${shops.length} shops, ${s.capacity_seconds} s`,
            };
          });
    const quietRate = capacity.lines_per_s * s.quiet_fraction;
    const busyRate = Math.max(1, capacity.lines_per_s * s.load_fraction - s.quiet_shops * quietRate);
    for (const x of shops) x.lines_per_s = x.role === 'quiet' ? quietRate : busyRate;
    say(
      `B10: capacity ${capacity.lines_per_s} lines/s; load ${Math.round(capacity.lines_per_s * s.load_fraction)} lines/s (quiet ${Math.round(quietRate)} each, busy ${Math.round(busyRate)})`,
    );
    await sleep(2000);

    const phases: B10Phase[] = [];
    const answersOf: Record<string, Answer[]> = {};
    let rebuild: ReplayCliRun | null = null;
    let swap = statsOf([]);
    let whileReplaying = statsOf([]);
    let phaseStart = 0;
    for (const name of ['baseline', 'rebuild', 'baseline_after'] as const) {
      // Each phase starts with the live projector caught up (a backlog left by the one before is not this one's).
      const drained = await caughtUp(pool, kafka, topics.commands, 900);
      if (drained > 1) say(`B10: the live projector took ${drained.toFixed(1)} s to catch up before ${name}`);
      await server.ask('reset');
      const cpu = machineCpu();
      phaseStart = performance.now();
      let replayEnded: number | null = null;
      const replay =
        name === 'rebuild'
          ? runReplayCli({
              databaseUrl: url,
              env: { ...kafkaEnv, COMMANDS_TOPIC: topics.commands },
              onLine: (line) => (/\] (fresh|within|swap|dropped|done|failed)/.test(line) ? say(`B10 ${line}`) : undefined),
            }).finally(() => (replayEnded = performance.now()))
          : null;
      const answers = await openLoop({
        ...load,
        stop: (ms) =>
          replay ? replayEnded !== null && performance.now() - replayEnded > s.tail_seconds * 1000 : ms > s.baseline_seconds * 1000,
        drainMs: 180_000,
      });
      if (replay) rebuild = await replay;
      const seconds = (performance.now() - phaseStart) / 1000;
      const stats = await server.ask<{ event_loop_delay_ms: { p99: number }; cpu_ms: number }>('stats');
      all.push(...answers);
      answersOf[name] = answers;
      const p = phaseStats(answers, s.warmup_seconds);
      phases.push({
        name,
        seconds: round(seconds, 1),
        ...p,
        machine_busy: round(busyShareSince(cpu), 2),
        server_event_loop_p99_ms: stats.event_loop_delay_ms.p99,
        server_cpu_ms: stats.cpu_ms,
      });
      say(
        `B10 ${name}: ${round(seconds, 1)} s, quiet p50/p99/max ${p.quiet.p50_ms}/${p.quiet.p99_ms}/${p.quiet.max_ms} ms over ${p.quiet.requests}, all ${JSON.stringify(p.all.statuses)}`,
      );
      if (name === 'rebuild' && rebuild) {
        const r = rebuild;
        // The swap on the rebuild phase's clock (s), for the answers around it.
        const swapFrom = ((r.swap_started_ms ?? r.ended_ms) - phaseStart) / 1000;
        const swapTo = ((r.swapped_ms ?? r.ended_ms) - phaseStart) / 1000;
        swap = answersAround(answers, swapFrom, swapTo, 1);
        whileReplaying = statsOf(
          answers.filter((a) => a.role === 'quiet' && a.at >= s.warmup_seconds && a.at + a.ms / 1000 < swapFrom - 1),
        );
      }
      await sleep(2000);
    }

    await caughtUp(pool, kafka, topics.commands, 900);
    const perShop = shops.map((x) => {
      const mine = all.filter((a) => a.shop === x.shop);
      return { shop: x.shop, accepted: statsOf(mine).accepted, unknown: mine.filter((a) => a.status <= 0 || a.status === 503).length };
    });
    const nothingLost = await checkNothingLost(pool, perShop, s.lines_per_request);
    say(`B10: nothing lost: ${nothingLost.ok ? 'yes' : 'NO'} (lost ${nothingLost.lost}, doubled ${nothingLost.doubled})`);
    await server.stop();
    server = null;

    say('B10: replay --into scratch of the same log, to compare with the rebuilt read model');
    const scratchUrl = await createBenchDatabase('ingest_bench_b10_scratch');
    // Nothing else runs now: flat out.
    const scratch = await runReplayCli({
      databaseUrl: url,
      scratchUrl,
      env: { ...kafkaEnv, COMMANDS_TOPIC: topics.commands, REPLAY_BUSY_PERCENT: '100' },
    });
    const comparison = await compareReadModels(url, scratchUrl);
    const baselineQuiet = statsOf(
      [...(answersOf['baseline'] ?? []), ...(answersOf['baseline_after'] ?? [])].filter(
        (a) => a.role === 'quiet' && a.at >= s.warmup_seconds,
      ),
    );
    const during = phases.find((p) => p.name === 'rebuild')!;
    const r = rebuild!;
    return {
      settings: s,
      log,
      catch_up_seconds: round(catchUp, 1),
      capacity_lines_per_s: capacity.lines_per_s,
      capacity_source: capacity.source,
      load_lines_per_s: Math.round(capacity.lines_per_s * s.load_fraction),
      shops: shops.map(({ bodies: _bodies, ...x }) => ({ ...x, lines_per_s: Math.round(x.lines_per_s) })),
      phases,
      baseline_quiet: baselineQuiet,
      p99_ratio: baselineQuiet.p99_ms > 0 ? round(during.quiet.p99_ms / baselineQuiet.p99_ms, 3) : null,
      replay: {
        commands: r.commands,
        seconds: r.seconds,
        commands_per_s: r.commands_per_s,
        cpu_s: round(r.cpu_s, 1),
        locked_ms: r.locked_ms,
        swap_window_ms: r.swap_started_ms !== null && r.swapped_ms !== null ? Math.round(r.swapped_ms - r.swap_started_ms) : null,
        swap_attempts_retried: r.swap_attempts_retried,
      },
      swap,
      quiet_while_replaying: whileReplaying,
      replay_env: Object.fromEntries(
        Object.entries(process.env).filter((e): e is [string, string] => e[0].startsWith('REPLAY_') && e[1] !== undefined),
      ),
      nothing_lost: nothingLost,
      verify: {
        identical: comparison.every((t) => t.identical),
        differing_tables: comparison.filter((t) => !t.identical).map((t) => t.table),
        scratch_replay_seconds: scratch.seconds,
      },
    };
  } finally {
    setupAgent.destroy();
    loadAgent.destroy();
    await server?.stop().catch(() => {});
    await pool?.end().catch(() => {});
    await broker.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
