// `npm run bench`: B1 projector apply, B2 gateway, B5 replay, B6 and B4 end to end, B7 fair admission (B8 scale-out
// on a three-node cluster only when BENCH_ONLY names it); writes bench/results/latest.{json,md}.
// `npm run bench -- --baseline <commit>`: the same on that commit too, side by side (baseline.ts).
// Sequential on purpose (2-core machines): one thing measured at a time. Not part of `npm test`.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createPool } from '@ingest/db';
import { acquireKafka, kafkaVersion, REPO_ROOT, type AcquiredKafka } from '@ingest/devstack';
import { createKafka, ensureTopics, readKafkaSecurity, topicPlan } from '@ingest/kafka';
import { envInt } from '@ingest/runtime';
import { runB1, type B1Parts, type B1Result } from './b1-apply.ts';
import { runB2, type B2Result } from './b2-gateway.ts';
import { runB4, type B4Result } from './b4-e2e.ts';
import { runB5, type B5Result } from './b5-replay.ts';
import { runB9, type B9Result } from './b9-replay-scale.ts';
import { runAgainstBaseline } from './baseline.ts';
import { runB10, type B10Result } from './b10-rebuild-under-load.ts';
import { runB6, type B6Result } from './b6-e2e.ts';
import { runB7, type B7Result } from './b7-fair.ts';
import { runB8, type B8Result } from './b8-scale.ts';
import { renderMarkdown, targetsOf, type Results } from './report.ts';
import { ADMIN_URL, createBenchDatabase, dropBenchDatabases, prepareTemplate, serverSettings } from './lib/db.ts';
import { gitHead, machine, packageVersion, round, say } from './lib/util.ts';

// `--baseline <commit>` (or BENCH_BASELINE): the same benches on that commit too, interleaved (baseline.ts).
const baselineArg = process.argv.indexOf('--baseline');
const baselineRev = baselineArg >= 0 ? process.argv[baselineArg + 1] : process.env['BENCH_BASELINE'];
if (baselineRev !== undefined) {
  if (!baselineRev || baselineRev.startsWith('--')) throw new Error('--baseline needs a commit');
  // The runs it makes are plain runs of each side: without this, each would compare again.
  delete process.env['BENCH_BASELINE'];
  runAgainstBaseline(baselineRev);
  process.exit();
}

// The same TLS/SASL settings as the services, for a KAFKA_BROKERS cluster that needs them.
const kafkaSecurity = readKafkaSecurity(process.env);

const env = process.env;
/** BENCH_ONLY: a subset, e.g. `b1.floor,b6` (b1.floor: B1's inventory scenarios, projector and floor only). */
const only = new Set(
  (env['BENCH_ONLY'] ?? 'b1,b2,b5,b6,b4,b7')
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean),
);
const b1Parts: B1Parts | null = only.has('b1')
  ? { floor: true, baselines: true, orders: true }
  : only.has('b1.floor')
    ? { floor: true, baselines: false, orders: false }
    : null;
/** Where latest.json and latest.md go (default bench/results; point a smoke run elsewhere). */
const resultsDir = env['BENCH_RESULTS_DIR'] ?? join(REPO_ROOT, 'bench', 'results');
const quick = env['BENCH_QUICK'] === '1';
const settings = {
  b1: {
    products: envInt(env, 'BENCH_PRODUCTS', quick ? 20_000 : 100_000, 1),
    preloadLocations: envInt(env, 'BENCH_PRELOAD_LOCATIONS', 10, 3),
    otherShops: envInt(env, 'BENCH_OTHER_SHOPS', 4, 0),
    preloadOrderLines: envInt(env, 'BENCH_PRELOAD_ORDER_LINES', quick ? 50_000 : 1_000_000, 1),
    snapshotLines: envInt(env, 'BENCH_SNAPSHOT_LINES', 10_000, 1),
    orderRows: envInt(env, 'BENCH_ORDER_ROWS', 5_000, 5),
    iterations: envInt(env, 'BENCH_ITERATIONS', quick ? 2 : 8, 1),
    warmup: envInt(env, 'BENCH_WARMUP', 1, 0),
  },
  b2: {
    lines: envInt(env, 'BENCH_B2_LINES', 10_000, 1),
    concurrency: envInt(env, 'BENCH_B2_CONCURRENCY', 4, 1),
    seconds: envInt(env, 'BENCH_B2_SECONDS', quick ? 3 : 10, 1),
    single_seconds: envInt(env, 'BENCH_B2_SINGLE_SECONDS', quick ? 2 : 5, 1),
    warmup_requests: envInt(env, 'BENCH_B2_WARMUP', 8, 0),
    profile_seconds: envInt(env, 'BENCH_B2_PROFILE_SECONDS', quick ? 2 : 6, 1),
  },
  b5: {
    commands: envInt(env, 'BENCH_B5_COMMANDS', 2_000, 20),
    shops: envInt(env, 'BENCH_B5_SHOPS', 6, 1),
    partitions: envInt(env, 'BENCH_B5_PARTITIONS', 3, 1),
    live_partitions_concurrently: 3,
    replay_batch_size: envInt(env, 'BENCH_B5_REPLAY_BATCH', 500, 1),
  },
  // B9 (BENCH_ONLY=b9, not in the default set: about 20 minutes for a million commands).
  b9: {
    commands: envInt(env, 'BENCH_B9_COMMANDS', quick ? 50_000 : 1_000_000, 1_000),
    live_commands: envInt(env, 'BENCH_B9_LIVE_COMMANDS', quick ? 5_000 : 30_000, 100),
    shops: envInt(env, 'BENCH_B9_SHOPS', 60, 1),
    locations: envInt(env, 'BENCH_B9_LOCATIONS', 4, 1),
    products: envInt(env, 'BENCH_B9_PRODUCTS', 500, 21),
    partitions: envInt(env, 'BENCH_B9_PARTITIONS', 3, 1),
    replay_batch: envInt(env, 'BENCH_B9_REPLAY_BATCH', 500, 1),
    replay_concurrency: envInt(env, 'BENCH_B9_REPLAY_CONCURRENCY', 3, 1),
    kill_at_fraction: 0.5,
  },
  // B10 (BENCH_ONLY=b10, not in the default set): an in-place rebuild under live load, on a broker of its own.
  b10: {
    commands: envInt(env, 'BENCH_B10_COMMANDS', quick ? 50_000 : 500_000, 1_000),
    shops: envInt(env, 'BENCH_B10_SHOPS', 60, 1),
    locations: envInt(env, 'BENCH_B10_LOCATIONS', 4, 1),
    products: envInt(env, 'BENCH_B10_PRODUCTS', 500, 21),
    partitions: envInt(env, 'BENCH_B10_PARTITIONS', 6, 4),
    lines_per_request: envInt(env, 'BENCH_B10_LINES', 100, 1),
    quiet_shops: 3,
    quiet_fraction: 0.1,
    load_fraction: 0.5,
    baseline_seconds: envInt(env, 'BENCH_B10_BASELINE_SECONDS', quick ? 40 : 90, 5),
    warmup_seconds: 3,
    tail_seconds: 5,
    capacity_clients: 8,
    capacity_seconds: envInt(env, 'BENCH_B10_CAPACITY_SECONDS', quick ? 5 : 10, 1),
    fixed_capacity: envInt(env, 'BENCH_B10_CAPACITY', 0, 0),
    kafka_port: envInt(env, 'BENCH_B10_KAFKA_PORT', 39592, 1024),
    controller_port: envInt(env, 'BENCH_B10_CONTROLLER_PORT', 39593, 1024),
    catch_up_timeout_s: envInt(env, 'BENCH_B10_CATCH_UP_SECONDS', 3600, 10),
  },
  b4: {
    fractions: [0.25, 0.5, 0.75, 1.0],
    seconds_per_rate: envInt(env, 'BENCH_B4_SECONDS', quick ? 5 : 20, 1),
    lines_per_request: envInt(env, 'BENCH_B4_LINES', 1_000, 1),
    shops: envInt(env, 'BENCH_B4_SHOPS', 6, 1),
    partitions: envInt(env, 'BENCH_B4_PARTITIONS', 3, 1),
    lag_sample_ms: 500,
    drain_timeout_s: envInt(env, 'BENCH_B4_DRAIN_SECONDS', 30, 1),
    kafka_probe_messages: 40,
  },
  b6: {
    lines_per_request: envInt(env, 'BENCH_B6_LINES', 1_000, 1),
    clients: envInt(env, 'BENCH_B6_CLIENTS', 32, 1),
    shop_counts: (env['BENCH_B6_SHOPS'] ?? '1,4')
      .split(',')
      .map((x) => Number(x.trim()))
      .filter((n) => Number.isInteger(n) && n > 0),
    seconds: envInt(env, 'BENCH_B6_SECONDS', quick ? 5 : 20, 1),
    warmup_seconds: envInt(env, 'BENCH_B6_WARMUP_SECONDS', quick ? 2 : 5, 0),
    rounds: envInt(env, 'BENCH_B6_ROUNDS', 1, 1),
    partitions: envInt(env, 'BENCH_B6_PARTITIONS', 6, 1),
    drain_timeout_s: envInt(env, 'BENCH_B6_DRAIN_SECONDS', 120, 1),
  },
  b7: {
    lines_per_request: envInt(env, 'BENCH_B7_LINES', 100, 1),
    seconds: envInt(env, 'BENCH_B7_SECONDS', quick ? 8 : 30, 2),
    rounds: envInt(env, 'BENCH_B7_ROUNDS', quick ? 1 : 5, 1),
    warmup_seconds: envInt(env, 'BENCH_B7_WARMUP_SECONDS', quick ? 2 : 3, 0),
    quiet_shops: 3,
    quiet_fraction: 0.1,
    noisy_factor: 10,
    partitions: envInt(env, 'BENCH_B7_PARTITIONS', 6, 4),
    capacity_clients: 8,
    capacity_seconds: envInt(env, 'BENCH_B7_CAPACITY_SECONDS', quick ? 5 : 10, 1),
    shop_rate_fraction: 0.1,
    drain_timeout_s: envInt(env, 'BENCH_B7_DRAIN_SECONDS', 60, 1),
    noisy_nice: envInt(env, 'BENCH_B7_NOISY_NICE', 10, 0),
    fixed_capacity: envInt(env, 'BENCH_B7_CAPACITY', 0, 0),
    topology: env['BENCH_B7_TOPOLOGY'] === 'split' ? ('split' as const) : ('one_process' as const),
  },
  b8: {
    cluster_size: 3,
    base_port: envInt(env, 'BENCH_B8_BASE_PORT', 39092, 1024),
    replication_factor: 3,
    min_insync_replicas: 2,
    partitions: envInt(env, 'BENCH_B8_PARTITIONS', 6, 3),
    shops: envInt(env, 'BENCH_B8_SHOPS', 12, 1),
    clients: envInt(env, 'BENCH_B8_CLIENTS', 16, 1),
    lines_per_request: envInt(env, 'BENCH_B8_LINES', 200, 1),
    seconds: envInt(env, 'BENCH_B8_SECONDS', quick ? 8 : 30, 2),
    warmup_seconds: envInt(env, 'BENCH_B8_WARMUP_SECONDS', quick ? 2 : 5, 0),
    steady_before_join_seconds: envInt(env, 'BENCH_B8_STEADY_SECONDS', quick ? 5 : 10, 2),
    after_leave_seconds: 15,
    lag_sample_ms: 1000,
    configurations: [
      [1, 1],
      [2, 2],
      [2, 3],
    ] as Array<[number, number]>,
  },
  b2_through_kafka: env['BENCH_B2_KAFKA'] !== '0',
};
/** B4's capacity when B6 does not run: --capacity=N or BENCH_B4_CAPACITY (lines/s), else 10,000. */
const capacityArg = process.argv.find((a) => a.startsWith('--capacity='))?.slice('--capacity='.length) ?? env['BENCH_B4_CAPACITY'];
const FALLBACK_CAPACITY = 10_000;
/**
 * What an earlier run wrote: a run of a subset (BENCH_ONLY) keeps the other benches' figures, each
 * marked with the commit and date it was measured at (`carried_over`).
 */
const previous: (Partial<Results> & { carried_over?: Record<string, { commit: string; date: string }> }) | null = existsSync(
  join(resultsDir, 'latest.json'),
)
  ? (JSON.parse(readFileSync(join(resultsDir, 'latest.json'), 'utf8')) as Partial<Results>)
  : null;

const started = performance.now();
const id = `${Date.now().toString(36)}${Math.floor(Math.random() * 1e4)}`;
const head = gitHead(REPO_ROOT);
let kafka: AcquiredKafka | null = null;
let b1: B1Result | undefined;
let b2: B2Result | undefined;
let b5: B5Result | undefined;
let b9: B9Result | undefined;
let b10: B10Result | undefined;
let b6: B6Result | undefined;
let property: PropertyRun | undefined;
let b4: B4Result | undefined;
let b7: B7Result | undefined;
let b8: B8Result | undefined;
const errors: Record<string, string> = {};
const admin = createPool({ connectionString: ADMIN_URL, max: 1, applicationName: 'ingest-bench' });
const pgSettings = await admin.connect().then(async (c) => serverSettings(c).finally(() => c.release()));
await admin.end();

try {
  say(`machine ${JSON.stringify(machine())}; commit ${head.commit}${head.dirty ? ' (dirty tree)' : ''}; running ${[...only].join(', ')}`);
  const left = await dropBenchDatabases();
  if (left.length) say(`dropped databases left by an earlier run: ${left.join(', ')}`);
  await prepareTemplate();

  if (b1Parts) {
    const url = await createBenchDatabase('ingest_bench_b1');
    try {
      b1 = await runB1({ name: 'ingest_bench_b1', url }, settings.b1, b1Parts);
    } catch (err) {
      errors['B1'] = err instanceof Error ? (err.stack ?? err.message) : String(err);
      say(`B1 failed: ${errors['B1']}`);
    }
  }

  if (b1Parts) property = longPropertyRun(quick ? 50 : envInt(env, 'BENCH_PROPERTY_RUNS', 400, 1));

  if (
    only.has('b5') ||
    only.has('b9') ||
    only.has('b6') ||
    only.has('b4') ||
    only.has('b7') ||
    (only.has('b2') && settings.b2_through_kafka)
  ) {
    kafka = await acquireKafka({ dataDir: join(REPO_ROOT, '.data', 'kafka-bench'), log: (m) => say(`kafka: ${m}`) });
    say(`kafka ${kafka.brokers.join(',')} (${kafka.source})`);
  }

  if (only.has('b2')) {
    const url = await createBenchDatabase('ingest_bench_b2');
    const topic = `bench.${id}.gateway-commands`;
    try {
      if (kafka && settings.b2_through_kafka) {
        const plan = topicPlan({ commands: topic, audit: `${topic}.a`, stockZero: `${topic}.z`, stockRestored: `${topic}.r` }, 3)[0]!;
        await ensureTopics(createKafka({ brokers: kafka.brokers, security: kafkaSecurity, clientId: 'ingest-bench-setup' }), [plan]);
      }
      b2 = await runB2(settings.b2, url, kafka && settings.b2_through_kafka ? { brokers: kafka.brokers, topic } : null);
    } catch (err) {
      errors['B2'] = err instanceof Error ? (err.stack ?? err.message) : String(err);
      say(`B2 failed: ${errors['B2']}`);
    } finally {
      if (kafka && settings.b2_through_kafka) {
        const ka = createKafka({ brokers: kafka.brokers, security: kafkaSecurity, clientId: 'ingest-bench-setup' }).admin();
        await ka.connect();
        await ka.deleteTopics({ topics: [topic] }).catch(() => {});
        await ka.disconnect();
      }
    }
  }

  if (only.has('b5') && kafka) {
    try {
      b5 = await runB5(settings.b5, kafka.brokers, id);
    } catch (err) {
      errors['B5'] = err instanceof Error ? (err.stack ?? err.message) : String(err);
      say(`B5 failed: ${errors['B5']}`);
    }
  }

  if (only.has('b9') && kafka) {
    try {
      b9 = await runB9(settings.b9, kafka.brokers, id);
    } catch (err) {
      errors['B9'] = err instanceof Error ? (err.stack ?? err.message) : String(err);
      say(`B9 failed: ${errors['B9']}`);
    }
  }

  if (only.has('b10')) {
    // B10 runs on a broker of its own (never the shared one), started and stopped by it.
    try {
      b10 = await runB10(settings.b10, id);
    } catch (err) {
      errors['B10'] = err instanceof Error ? (err.stack ?? err.message) : String(err);
      say(`B10 failed: ${errors['B10']}`);
    }
  }

  if (only.has('b6') && kafka) {
    try {
      b6 = await runB6(settings.b6, kafka.brokers, id);
    } catch (err) {
      errors['B6'] = err instanceof Error ? (err.stack ?? err.message) : String(err);
      say(`B6 failed: ${errors['B6']}`);
    }
  }

  if (only.has('b4') && kafka) {
    // B4 is judged against the pipeline's own saturation throughput (B6, several shops), not the bare upsert.
    const most = b6 ? String(Math.max(...settings.b6.shop_counts)) : null;
    const pipeline = most ? b6?.lines_per_s.pipeline[most] : undefined;
    const capacity = pipeline
      ? { lines_per_s: pipeline, source: `B6 pipeline saturation with ${most} shop(s), lines/s (this run)` }
      : capacityArg && Number(capacityArg) > 0
        ? { lines_per_s: Number(capacityArg), source: '--capacity / BENCH_B4_CAPACITY' }
        : { lines_per_s: FALLBACK_CAPACITY, source: `fallback ${FALLBACK_CAPACITY} lines/s (B6 not run, no --capacity)` };
    try {
      b4 = await runB4(settings.b4, kafka.brokers, id, {
        ...capacity,
        b1_p95_ms_10k: b1?.inventory_snapshot.changed_100.projector.p95_ms ?? null,
      });
    } catch (err) {
      errors['B4'] = err instanceof Error ? (err.stack ?? err.message) : String(err);
      say(`B4 failed: ${errors['B4']}`);
    }
  }

  if (only.has('b7') && kafka) {
    // B7 measures the capacity itself, on the machine as it is when it runs; B6's figure is shown beside it.
    const most = String(Math.max(...settings.b6.shop_counts));
    const b6Capacity = b6?.lines_per_s.pipeline[most] ?? previous?.B6?.lines_per_s.pipeline[most] ?? null;
    try {
      b7 = await runB7(settings.b7, kafka.brokers, id, b6Capacity);
    } catch (err) {
      errors['B7'] = err instanceof Error ? (err.stack ?? err.message) : String(err);
      say(`B7 failed: ${errors['B7']}`);
    }
  }

  if (only.has('b8')) {
    // B8 runs on a three-node cluster of its own (never the shared broker), started and stopped by it.
    try {
      b8 = await runB8(settings.b8, id);
    } catch (err) {
      errors['B8'] = err instanceof Error ? (err.stack ?? err.message) : String(err);
      say(`B8 failed: ${errors['B8']}`);
    }
  }
} finally {
  const dropped = await dropBenchDatabases().catch((err: unknown) => (say(`could not drop bench databases: ${String(err)}`), []));
  say(`dropped ${dropped.join(', ') || 'no databases'}`);
  if (kafka) await kafka.release();
}

const totalSeconds = Math.round((performance.now() - started) / 100) / 10;
const versions = {
  node: process.version,
  postgres: pgSettings['server_version'] ?? 'unknown',
  kafka_broker: kafka
    ? kafka.source === 'started'
      ? kafkaVersion()
      : `reused ${kafka.source} broker (project pins ${kafkaVersion()})`
    : 'not used',
  kafkajs: packageVersion('kafkajs', join(REPO_ROOT, 'packages/kafka/package.json')),
  express: packageVersion('express', join(REPO_ROOT, 'services/gateway/package.json')),
  pg: packageVersion('pg', join(REPO_ROOT, 'packages/db/package.json')),
  ajv: packageVersion('ajv', join(REPO_ROOT, 'packages/contracts/package.json')),
};
const results = {
  commit: head.commit,
  working_tree_dirty: head.dirty,
  date: new Date().toISOString(),
  total_seconds: totalSeconds,
  machine: machine(),
  versions,
  settings: { ...settings, postgres: pgSettings, kafka_brokers: kafka?.brokers ?? null },
  B1: b1 ? b1Summary(b1) : null,
  B2: b2 ? { ...b2 } : null,
  B5: b5 ? { ...b5 } : null,
  B9: b9 ? { ...b9 } : null,
  B10: b10 ? { ...b10 } : null,
  B6: b6 ? { ...b6 } : null,
  B4: b4 ? { ...b4 } : null,
  B7: b7 ? { ...b7 } : null,
  B8: b8 ? { ...b8 } : null,
  errors,
};
// Benches not selected by BENCH_ONLY keep their earlier figures (a smoke run into BENCH_RESULTS_DIR too).
const carried: Record<string, { commit: string; date: string }> = {};
for (const key of ['B1', 'B2', 'B5', 'B9', 'B10', 'B6', 'B4', 'B7', 'B8'] as const) {
  const earlier = previous?.[key];
  if (only.has(key.toLowerCase()) || (key === 'B1' && b1Parts) || earlier == null) continue;
  (results as Record<string, unknown>)[key] = earlier;
  carried[key] = previous?.carried_over?.[key] ?? { commit: previous?.commit ?? 'unknown', date: previous?.date ?? 'unknown' };
}
Object.assign(results, Object.keys(carried).length ? { carried_over: carried } : {});
const withTargets = { ...results, targets: targetsOf(results) };
mkdirSync(resultsDir, { recursive: true });
writeFileSync(join(resultsDir, 'latest.json'), `${JSON.stringify(withTargets, null, 2)}\n`);
writeFileSync(join(resultsDir, 'latest.md'), renderMarkdown(withTargets));
say(`wrote ${join(resultsDir, 'latest.json')} and latest.md in ${totalSeconds} s`);
for (const t of withTargets.targets)
  say(`${t.met === null ? 'n/a ' : t.met ? 'MET ' : 'MISS'} ${t.bench} ${t.what}: ${t.value} (target ${t.target})`);
if (Object.keys(errors).length) process.exitCode = 1;

/** B1's headline figures: the floor ratios (the targets), and the older ratios against the bare upsert when the baselines ran. */
function b1Summary(b1: B1Result) {
  const inv = b1.inventory_snapshot;
  const orders = b1.order_lines;
  return {
    ratio_floor_changed: inv.changed_100.ratio_floor,
    ratio_floor_10: inv.changed_10.ratio_floor,
    ratio_floor_resend: inv.resend.ratio_floor,
    ratio_floor_new: inv.new.ratio_floor,
    floor_rows_identical: b1.floor?.verified_identical,
    set_based_property: property,
    ...(orders && inv.changed_100.ratio_vs_bare !== undefined && orders.changed_100.ratio_vs_bare !== undefined
      ? {
          ratio_changed: Math.min(inv.changed_100.ratio_vs_bare, orders.changed_100.ratio_vs_bare),
          ratio_resend: Math.min(inv.resend.ratio_vs_bare ?? 0, orders.resend.ratio_vs_bare ?? 0),
          ratio_changed_inventory: inv.changed_100.ratio_vs_bare,
          ratio_changed_orders: orders.changed_100.ratio_vs_bare,
          ratio_resend_inventory: inv.resend.ratio_vs_bare,
          ratio_resend_orders: orders.resend.ratio_vs_bare,
        }
      : {}),
    resend_log_rows: inv.resend.projector.log_rows_per_command + (orders?.resend.projector.log_rows_per_command ?? 0),
    // The projector's load plans; the floor's plan is listed for information (on an empty daily table it scans it).
    no_seq_scan_of_big_tables: b1.plans.filter((p) => !p.query.startsWith('floor:')).every((p) => !p.seq_scan_on_big_table),
    ...b1,
  };
}

interface PropertyRun {
  test: string;
  runs: number;
  seed: number;
  passed: boolean;
  seconds: number;
}

/**
 * The set-based projection against the deciders (the integration property tests, one per inventory
 * kind, that `npm test` runs with a few cases), here with many more random command sequences, same seed.
 */
function longPropertyRun(runs: number): PropertyRun {
  const test = 'packages/projection/src/inventory/';
  say(`B1 property: ${test} with PROPERTY_RUNS=${runs}`);
  const t0 = performance.now();
  const r = spawnSync(join(REPO_ROOT, 'node_modules', '.bin', 'vitest'), ['run', '--project', 'integration', test], {
    cwd: REPO_ROOT,
    env: { ...process.env, PROPERTY_RUNS: String(runs) },
    encoding: 'utf8',
  });
  const seconds = round((performance.now() - t0) / 1000, 1);
  const passed = r.status === 0;
  say(`B1 property: ${passed ? 'passed' : 'FAILED'} in ${seconds} s`);
  if (!passed) errors['B1.property'] = `${r.stdout ?? ''}${r.stderr ?? ''}`.slice(-4000);
  return { test, runs, seed: 20261123, passed, seconds };
}
