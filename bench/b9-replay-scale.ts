// B9 replay at log scale: a command log of a million mixed commands (B5's mix over more shops,
// locations and products, as the gateway writes them, straight to the topic), the live projector on
// a slice of it for the baseline rate, then `replay --into scratch` of the whole log as an operator
// runs it (the CLI, a process of its own, sampled every second), once straight through and once
// killed with SIGKILL at half way and resumed; the two rebuilt databases must be identical.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { SchemaRegistry } from '@ingest/contracts';
import { createPool, projectorCheckpoints, withDatabase } from '@ingest/db';
import { REPO_ROOT } from '@ingest/devstack';
import { createKafka, ensureTopics, readKafkaSecurity, topicPlan, type TopicNames } from '@ingest/kafka';
import { compareReadModels } from '@ingest/operator';
import { startProjector } from '@ingest/projector';
import { createRegistry } from '@ingest/runtime';
import { silentLogger } from '@ingest/runtime/testing';
import { ADMIN_URL, createBenchDatabase, observedPool, walBytesSince, walLsn } from './lib/db.ts';
import { procStat, sampleProcess, type ProcessSample } from './lib/processSampler.ts';
import { round, say, sleep } from './lib/util.ts';
import { writeCommandLog } from './lib/writeCommandLog.ts';
import { replayFigures, type ReplayFigures } from './b9-figures.ts';

const kafkaSecurity = readKafkaSecurity(process.env);

export interface B9Settings {
  commands: number;
  live_commands: number;
  shops: number;
  locations: number;
  products: number;
  partitions: number;
  replay_batch: number;
  replay_concurrency: number;
  kill_at_fraction: number;
}

export interface B9Result {
  settings: B9Settings;
  log: { commands: number; lines: number; bytes: number; write_seconds: number; mix: Record<string, number> };
  live: { commands: number; lines: number; seconds: number; commands_per_s: number; lines_per_s: number };
  replay: ReplayFigures;
  /** replay / live, commands per second, this run. */
  ratio: number;
  resume: {
    killed_at_commands: number;
    committed_at_kill: number;
    /** Replayed before the kill but not committed: done again by the resumed run. */
    redone_commands: number;
    /** What at most one uncommitted batch per partition replayed side by side would be. */
    one_batch_per_partition: number;
    killed_run_seconds: number;
    resumed_run_seconds: number;
    /** Both runs together minus the straight run: restart, the redone batch, the group join. */
    time_lost_seconds: number;
  };
  verify: { identical: boolean; differing_tables: string[] };
}

async function freePort(): Promise<number> {
  const srv = createServer().listen(0, '127.0.0.1');
  await once(srv, 'listening');
  const port = (srv.address() as { port: number }).port;
  srv.close();
  return port;
}

interface ReplayProcess {
  samples: ProcessSample[];
  /** PostgreSQL CPU seconds of the replay's connections. */
  pgCpuSeconds: number;
  seconds: number;
  code: number | null;
  signal: string | null;
  doneLine: string | null;
  walBytes: number;
}

/**
 * Runs the operator's replay CLI into `scratchUrl`; `killWhen` (sampled every second) ends it
 * with SIGKILL. PostgreSQL's side is sampled too: the CPU of the replay's backends.
 */
async function runReplayCli(
  opts: { liveUrl: string; scratchUrl: string; brokers: string[]; topic: string; s: B9Settings; resume: boolean },
  killWhen?: (sample: ProcessSample) => boolean,
): Promise<ReplayProcess> {
  const port = await freePort();
  const admin = createPool({ connectionString: ADMIN_URL, max: 1, applicationName: 'ingest-bench' });
  const walFrom = await walLsn(admin);
  const started = performance.now();
  const child = spawn(
    process.execPath,
    // Node's flags as `npm run replay` starts it (package.json, docs/replay.md: memory).
    [
      '--max-semi-space-size=16',
      join(REPO_ROOT, 'services/operator/src/cli/replay.ts'),
      '--into',
      'scratch',
      ...(opts.resume ? ['--resume'] : []),
    ],
    {
      cwd: REPO_ROOT,
      env: {
        ...process.env,
        DATABASE_URL: opts.liveUrl,
        REPLAY_DATABASE_URL: opts.scratchUrl,
        KAFKA_BROKERS: opts.brokers.join(','),
        COMMANDS_TOPIC: opts.topic,
        REPLAY_BATCH: String(opts.s.replay_batch),
        REPLAY_CONCURRENCY: String(opts.s.replay_concurrency),
        REPLAY_METRICS_PORT: String(port),
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let doneLine: string | null = null;
  let tail = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    tail = (tail + chunk).slice(-4000);
    for (const line of chunk.split('\n')) if (/\] (done|stopped):/.test(line)) doneLine = line.trim();
  });
  const exited = once(child, 'exit') as Promise<[number | null, string | null]>;
  const sampler = sampleProcess(child.pid!, {
    metricsUrl: `http://127.0.0.1:${port}/metrics`,
    gauges: ['replay_commands_done', 'replay_commands_total'],
  });
  const pgCpu = new Map<number, number>();
  let finished = false;
  void exited.then(() => (finished = true));
  const db = createPool({ connectionString: withDatabase(ADMIN_URL, 'postgres'), max: 1, applicationName: 'ingest-bench' });
  while (!finished) {
    await sleep(1000);
    const pids = await db
      .query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE application_name LIKE 'ingest-replay%'`)
      .then((r) => r.rows.map((x) => x.pid))
      .catch(() => []);
    for (const pid of pids) {
      const st = procStat(pid);
      if (st) pgCpu.set(pid, Math.max(pgCpu.get(pid) ?? 0, st.cpu_s));
    }
    const last = sampler.latest();
    if (killWhen && last && !finished && killWhen(last)) {
      child.kill('SIGKILL');
      break;
    }
  }
  const [code, signal] = await exited;
  const seconds = (performance.now() - started) / 1000;
  const samples = sampler.stop();
  const walBytes = await walBytesSince(admin, walFrom);
  await db.end();
  await admin.end();
  if (!killWhen && code !== 0) throw new Error(`replay exited ${code ?? signal}: ${tail}`);
  return {
    samples,
    pgCpuSeconds: [...pgCpu.values()].reduce((a, b) => a + b, 0),
    seconds,
    code,
    signal,
    doneLine,
    walBytes,
  };
}

export async function runB9(s: B9Settings, brokers: string[], id: string): Promise<B9Result> {
  const names = (tag: string): TopicNames => ({
    commands: `bench.${id}.${tag}.commands`,
    audit: `bench.${id}.${tag}.audit`,
    stockZero: `bench.${id}.${tag}.stock-zero`,
    stockRestored: `bench.${id}.${tag}.stock-restored`,
  });
  const full = names('b9');
  const slice = names('b9slice');
  const kafka = createKafka({ brokers, security: kafkaSecurity, clientId: `ingest-bench-${id}` });
  await ensureTopics(kafka, [...topicPlan(full, s.partitions), ...topicPlan(slice, s.partitions)]);

  // The log, written as the gateway writes; the first live_commands go to the slice topic too.
  const written = await writeCommandLog(kafka, {
    topic: full.commands,
    commands: s.commands,
    shape: { shops: s.shops, locations: s.locations, products: s.products, prefix: `bench-b9-${id}` },
    extra: [{ topic: slice.commands, count: s.live_commands }],
    tag: 'B9',
  });
  const { lines, bytes, mix } = written;
  const sliceLines = written.extra_lines[0] ?? 0;
  const writeSeconds = written.write_seconds;

  // The live projector on the slice: the baseline rate of the same mix, in the same run.
  const liveUrl = await createBenchDatabase('ingest_bench_b9_live');
  const livePool = observedPool(
    createPool({ connectionString: liveUrl, role: 'ingest_service', max: 10, applicationName: 'ingest-bench-projector' }),
  );
  const liveAdmin = createPool({ connectionString: liveUrl, max: 1, applicationName: 'ingest-bench' });
  say(`B9: live projector on the first ${s.live_commands.toLocaleString('en-US')} commands`);
  const projector = await startProjector({
    pool: livePool.pool,
    kafka: createKafka({ brokers, security: kafkaSecurity, clientId: `ingest-bench-projector-${id}` }),
    schemas: new SchemaRegistry(),
    topics: slice,
    groupId: `bench-${id}-b9-projector`,
    log: silentLogger(),
    registry: createRegistry(),
    members: 3,
  });
  try {
    for (const deadline = Date.now() + 1_800_000; ;) {
      const n = (await liveAdmin.query<{ n: number }>('SELECT count(*)::int AS n FROM agent_runtime.command_results')).rows[0]!.n;
      if (n >= s.live_commands) break;
      if (Date.now() > deadline) throw new Error(`live projector: ${n} of ${s.live_commands} after 30 min`);
      await sleep(250);
    }
  } finally {
    await projector.stop();
    await livePool.pool.end();
    await liveAdmin.end();
  }
  const liveSeconds = (livePool.lastCommit()! - livePool.firstConnect()!) / 1000;
  say(`B9: live ${(s.live_commands / liveSeconds).toFixed(0)} commands/s`);

  // The straight replay of the whole log, then one killed at half way and resumed.
  const aUrl = await createBenchDatabase('ingest_bench_b9_a');
  const bUrl = await createBenchDatabase('ingest_bench_b9_b');
  const cli = { liveUrl, brokers, topic: full.commands, s };
  say('B9: replay --into scratch of the whole log');
  const straight = await runReplayCli({ ...cli, scratchUrl: aUrl, resume: false });
  say(`B9: ${straight.doneLine ?? 'done'}`);

  say(`B9: replay again, SIGKILL at ${Math.round(100 * s.kill_at_fraction)} %, then --resume`);
  let killedAt = 0;
  const killed = await runReplayCli({ ...cli, scratchUrl: bUrl, resume: false }, (x) => {
    const done = x.gauges['replay_commands_done'] ?? 0;
    if (done < s.kill_at_fraction * s.commands) return false;
    killedAt = done;
    return true;
  });
  const scratchB = createPool({ connectionString: bUrl, max: 1, applicationName: 'ingest-bench' });
  const committed = [...(await projectorCheckpoints.loadReplay(scratchB, full.commands)).values()].reduce((a, b) => a + b, 0);
  await scratchB.end();
  say(`B9: killed at ${killedAt} reported done, ${committed} committed`);
  const resumed = await runReplayCli({ ...cli, scratchUrl: bUrl, resume: true });
  say(`B9: resumed: ${resumed.doneLine ?? 'done'}`);
  const comparison = await compareReadModels(aUrl, bUrl);

  const admin = kafka.admin();
  await admin.connect();
  await admin.deleteTopics({ topics: [...Object.values(full), ...Object.values(slice)] }).catch(() => {});
  await admin.disconnect();

  const liveRate = s.live_commands / liveSeconds;
  const replay = replayFigures(straight, { commands: s.commands, lines });
  return {
    settings: s,
    log: { commands: s.commands, lines, bytes, write_seconds: round(writeSeconds, 1), mix },
    live: {
      commands: s.live_commands,
      lines: sliceLines,
      seconds: round(liveSeconds, 2),
      commands_per_s: round(liveRate, 1),
      lines_per_s: round(sliceLines / liveSeconds, 0),
    },
    replay,
    ratio: round(replay.commands_per_s / liveRate, 3),
    resume: {
      killed_at_commands: killedAt,
      committed_at_kill: committed,
      redone_commands: Math.max(0, killedAt - committed),
      one_batch_per_partition: s.replay_batch * s.replay_concurrency,
      killed_run_seconds: round(killed.seconds, 1),
      resumed_run_seconds: round(resumed.seconds, 1),
      time_lost_seconds: round(killed.seconds + resumed.seconds - straight.seconds, 1),
    },
    verify: {
      identical: comparison.every((t) => t.identical),
      differing_tables: comparison.filter((t) => !t.identical).map((t) => t.table),
    },
  };
}
