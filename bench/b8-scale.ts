// B8 scale-out: the pipeline as separate processes (services/gateway and
// services/projector main.ts, as deployed) on a three-node KRaft cluster of the bench's own
// (replication 3, min ISR 2), one consumer group. Closed-loop saturation with 1 gateway + 1 projector,
// 2 + 2, then 2 + 3; in the 2 + 3 stage the third projector joins under load and later leaves
// (SIGTERM), and the stall in reply completions around each rebalance is measured. CPU of every
// process of the pipeline and of the brokers comes from /proc/<pid>/stat; the machine's load average
// is recorded with each figure (the machine is shared: the figures are bounded by its 2 cores).
import { readFileSync, readdirSync, rmSync, mkdirSync } from 'node:fs';
import { Agent } from 'node:http';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { createPool, type Pool } from '@ingest/db';
import { kafkaVersion, REPO_ROOT, startKafkaCluster, type KafkaCluster } from '@ingest/devstack';
import { setting } from '@ingest/runtime';
import { createKafka, ensureTopics, partitionForKey, topicPlan, type TopicNames } from '@ingest/kafka';
import { serviceHost, type Service } from '../tests/faults/procs.ts';
import { post, SECRET, SNAPSHOT } from './b6-e2e.ts';
import { createBenchDatabase } from './lib/db.ts';
import { percentile, round, say, sleep } from './lib/util.ts';

export interface B8Settings {
  cluster_size: number;
  /** Node i of the bench's own cluster listens on base_port + 100·(i-1) (never the shared 9092). */
  base_port: number;
  replication_factor: number;
  min_insync_replicas: number;
  partitions: number;
  shops: number;
  clients: number;
  lines_per_request: number;
  /** Measured window of each configuration, after `warmup_seconds` of the same load. */
  seconds: number;
  warmup_seconds: number;
  /** 2 + 3 stage: steady 2 + 2 load before the third projector joins (the stall reference). */
  steady_before_join_seconds: number;
  /** Load kept going after the leave, to see the group settle and the rate recover. */
  after_leave_seconds: number;
  lag_sample_ms: number;
  /** [gateways, projectors] per configuration, in the order run. */
  configurations: Array<[number, number]>;
}

interface Completion {
  /** performance.now() when the reply arrived. */
  at: number;
  ms: number;
  status: number;
  good: boolean;
  gateway: number;
}

export interface B8Cpu {
  /** CPU seconds per second of the window (1.0 = one core busy), and as a share of the machine's cores. */
  gateways_cores: number;
  projectors_cores: number;
  brokers_cores: number;
  load_generator_cores: number;
  /** Every `postgres` process on the machine: the bench's work and whatever else uses the shared server. */
  postgres_all_cores: number;
  /** Whole machine (/proc/stat), everything included. */
  machine_busy_cores: number;
  /** Machine busy minus everything above: other people's work on the shared machine (tests, their brokers, the kernel). */
  other_processes_cores: number;
  /** (gateways + projectors + brokers) / cores of the machine. */
  pipeline_and_brokers_share: number;
  machine_share: number;
}

export interface B8Config {
  name: string;
  gateways: number;
  projectors: number;
  seconds: number;
  requests: number;
  statuses: Record<string, number>;
  accepted_lines_per_s: number;
  requests_per_s: number;
  p50_ms: number;
  p95_ms: number;
  p99_ms: number;
  max_ms: number;
  bad_replies: number;
  /** Consumer-group lag (commands appended, not yet committed), sampled every second over the window. */
  lag_max: number | null;
  lag_mean: number | null;
  lag_samples: number;
  cpu: B8Cpu;
  /** /proc/loadavg (1, 5, 15 min) at the window's start and end. */
  loadavg_start: number[];
  loadavg_end: number[];
  /** Partitions per group member (each projector process is PROJECTOR_CONCURRENCY members) once the group had settled (from the group's member assignments). */
  assignment: number[];
}

export interface B8Event {
  kind: 'join' | 'leave';
  /** Longest gap between consecutive reply completions from the event (spawn / SIGTERM) until the group settled + 2 s. */
  stall_ms: number;
  /** The same measure over the steady 2 + 2 window before the join (the reference), its 99th percentile gap too. */
  steady_max_gap_ms: number;
  steady_p99_gap_ms: number;
  /** Slowest reply completed in the event window, against the steady p99 reply. */
  max_reply_ms: number;
  steady_p99_reply_ms: number;
  /** Spawn / SIGTERM → group seen leaving Stable → Stable again with the new member count (polled every 100 ms). */
  rebalance_seen_after_ms: number | null;
  settled_after_ms: number | null;
  /** Join: spawn → /readyz 200 (process up and member of the group). Leave: SIGTERM → process exited. */
  process_ms: number;
  /** Completions per second from 5 s before to 15 s after the event (the dip). */
  completions_per_s: number[];
  /** kafkajs warnings/errors the projectors logged in the event window (they log nothing at info about the group). */
  projector_log_lines: string[];
}

export interface B8Result {
  settings: B8Settings;
  kafka_version: string;
  cluster: { brokers: string[]; started_seconds: number };
  shops: Array<{ shop: string; partition: number; locations: number }>;
  configs: B8Config[];
  events: B8Event[];
  /** Accepted (200/202) snapshot requests of the run vs results the projectors stored for them. */
  accepted: number;
  stored: number;
  nothing_lost: boolean;
  cores: number;
  /** /proc/loadavg before the cluster started: what the machine was doing before B8 added to it. */
  loadavg_before: number[];
  log_dir: string;
}

const CLK_TCK = 100; // Linux USER_HZ (getconf CLK_TCK), fixed at 100 on x86-64 and arm64

function procTicks(pid: number): number {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
    return Number(f[11]) + Number(f[12]); // utime + stime
  } catch {
    return 0; // gone
  }
}

function postgresPids(): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (readFileSync(`/proc/${d}/comm`, 'utf8').startsWith('postgres')) out.push(Number(d));
    } catch {
      // gone
    }
  }
  return out;
}

function machineTicks(): { busy: number; total: number } {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const total = f.slice(0, 8).reduce((a, b) => a + b, 0);
  const idle = (f[3] ?? 0) + (f[4] ?? 0);
  return { busy: total - idle, total };
}

const loadavg = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).map(Number);

/** CPU ticks of groups of processes, taken at a window's start and end. */
function cpuSnapshot(groups: Record<string, number[]>) {
  const at = performance.now();
  const ticks = Object.fromEntries(Object.entries(groups).map(([k, pids]) => [k, pids.reduce((a, p) => a + procTicks(p), 0)]));
  return { at, ticks, machine: machineTicks() };
}

/** Partitions per member, from a ConsumerProtocol MemberAssignment (version, [topic, [partition]], userdata). */
function assignedPartitions(buf: Buffer): number {
  try {
    let o = 2;
    const topics = buf.readInt32BE(o);
    o += 4;
    let n = 0;
    for (let t = 0; t < topics; t++) {
      o += 2 + buf.readInt16BE(o);
      const parts = buf.readInt32BE(o);
      o += 4 + 4 * parts;
      n += parts;
    }
    return n;
  } catch {
    return 0;
  }
}

export async function runB8(s: B8Settings, id: string): Promise<B8Result> {
  const cores = cpus().length;
  const dataDir = join(REPO_ROOT, '.data', 'kafka-bench-b8');
  const logDir = join(REPO_ROOT, '.data', 'bench-b8', id);
  mkdirSync(logDir, { recursive: true });
  const loadavgBefore = loadavg();
  const t0 = performance.now();
  say(
    `B8: load average before start ${loadavgBefore.join(' ')}; starting a ${s.cluster_size}-node Kafka cluster on ${s.base_port} (+100 per node)`,
  );
  const cluster: KafkaCluster = await startKafkaCluster({
    dataDir,
    size: s.cluster_size,
    basePort: s.base_port,
    log: (m) => say(`B8 kafka: ${m}`),
    fresh: true,
  });
  const clusterSeconds = round((performance.now() - t0) / 1000, 1);
  const host = serviceHost(logDir, (m) => say(`B8: ${m}`));
  let db: Pool | null = null;
  let ok = false;
  const kafka = createKafka({ brokers: cluster.brokers, clientId: `ingest-bench-b8-${id}` });
  const admin = kafka.admin();
  try {
    await admin.connect();
    const topics: TopicNames = {
      commands: `bench.${id}.b8.commands`,
      audit: `bench.${id}.b8.audit`,
      stockZero: `bench.${id}.b8.stock-zero`,
      stockRestored: `bench.${id}.b8.stock-restored`,
    };
    await ensureTopics(
      kafka,
      topicPlan(topics, s.partitions, { replicationFactor: s.replication_factor, minInsyncReplicas: s.min_insync_replicas }),
    );
    const url = await createBenchDatabase('ingest_bench_b8');
    db = createPool({ connectionString: url, max: 2, applicationName: 'ingest-bench-b8' });
    const groupId = `bench-${id}-b8-projector`;
    const inherited = { ...process.env };
    for (const k of ['FAILPOINTS', 'DATABASE_URL', 'KAFKA_BROKERS', 'PORT', 'HOST', 'PROJECTOR_METRICS_PORT', 'DB_ROLE', 'PROJECTOR_ROLES'])
      delete inherited[k];
    const env: NodeJS.ProcessEnv = {
      ...inherited,
      DATABASE_URL: url,
      KAFKA_BROKERS: cluster.brokers.join(','),
      COMMANDS_TOPIC: topics.commands,
      AUDIT_TOPIC: topics.audit,
      STOCK_ZERO_TOPIC: topics.stockZero,
      STOCK_RESTORED_TOPIC: topics.stockRestored,
      PROJECTOR_GROUP_ID: groupId,
      INGEST_SECRET: SECRET,
      LOG_LEVEL: 'info',
      LOG_FORMAT: 'json',
      KAFKAJS_NO_PARTITIONER_WARNING: '1',
      DAILY_SNAPSHOT_CHECK_MS: '3600000',
    };
    const maxG = Math.max(...s.configurations.map((c) => c[0]));
    const maxP = Math.max(...s.configurations.map((c) => c[1]));
    const gateways: Service[] = [];
    const projectors: Service[] = [];
    for (let i = 1; i <= maxG; i++) gateways.push(await host.create('gateway', `gateway-${i}`, env));
    // The first projector runs every role (relay, scheduler, pruner elect one process anyway); the
    // scaled ones only apply, as the deployment docs suggest.
    for (let i = 1; i <= maxP; i++)
      projectors.push(await host.create('projector', `projector-${i}`, i === 1 ? env : { ...env, PROJECTOR_ROLES: 'apply' }));

    // --- the group, observed from outside ---
    const describe = async () => {
      const g = (await admin.describeGroups([groupId])).groups[0];
      return {
        state: g?.state ?? 'unknown',
        members: g?.members.length ?? 0,
        assignment: (g?.members ?? []).map((m) => assignedPartitions(m.memberAssignment)).sort((a, b) => b - a),
      };
    };
    // Each projector process is PROJECTOR_CONCURRENCY members of the group (independent consumers).
    const membersPerProcess = setting(env, 'PROJECTOR_CONCURRENCY');
    const waitStable = async (processes: number, timeoutMs = 90_000) => {
      const members = processes * membersPerProcess;
      const deadline = performance.now() + timeoutMs;
      for (;;) {
        const d = await describe().catch(() => null);
        if (d && d.state === 'Stable' && d.members === members && d.assignment.reduce((a, b) => a + b, 0) === s.partitions) return d;
        if (performance.now() > deadline)
          throw new Error(
            `B8: the group did not settle with ${members} members (${processes} projectors) within ${timeoutMs} ms (last: ${JSON.stringify(d)})`,
          );
        await sleep(100);
      }
    };
    const lagNow = async (): Promise<number> => {
      const [ends, committed] = await Promise.all([
        admin.fetchTopicOffsets(topics.commands),
        admin.fetchOffsets({ groupId, topics: [topics.commands] }),
      ]);
      const done = new Map((committed[0]?.partitions ?? []).map((p) => [p.partition, Number(p.offset)]));
      return ends.reduce((sum, e) => {
        const c = done.get(e.partition) ?? -1;
        return sum + Math.max(0, Number(e.high) - (c < 0 ? Number(e.low) : c));
      }, 0);
    };

    await gateways[0]!.start();
    await projectors[0]!.start();
    await waitStable(1);

    // --- shops: `shops` of them, the same number on every partition (the producer's partitioner) ---
    const perPartition = Math.ceil(s.shops / s.partitions);
    const chosen: Array<{ shop: string; partition: number; locations: string[]; barcodes: string[] }> = [];
    for (let i = 0; chosen.length < s.shops && i < 1000; i++) {
      const shop = `bench-b8-${i}.myshop.example`;
      const partition = partitionForKey(shop, s.partitions);
      if (chosen.filter((c) => c.partition === partition).length >= perPartition) continue;
      chosen.push({ shop, partition, locations: [], barcodes: [] });
    }
    const setupAgent = new Agent({ keepAlive: true, maxSockets: 2 });
    const call = async (path: string, body: unknown): Promise<unknown> => {
      const r = await post(setupAgent, gateways[0]!.port, path, JSON.stringify(body));
      if (r.status !== 200) throw new Error(`B8: ${path} answered ${r.status}: ${r.text.slice(0, 300)}`);
      return JSON.parse(r.text) as unknown;
    };
    // Every client has a location of its own (a shop of its own when clients ≤ shops), so no snapshot is ever stale.
    const locationsPerShop = Math.ceil(s.clients / s.shops);
    for (const [i, c] of chosen.entries()) {
      const res = (await call('/api/admin/locations', {
        shop: c.shop,
        locations: Array.from({ length: locationsPerShop }, (_, k) => ({ name: `B8-${i}-${k}` })),
      })) as { locations: Array<{ location_id: string }> };
      c.locations = res.locations.map((l) => l.location_id);
      c.barcodes = Array.from({ length: s.lines_per_request }, (_, k) => `47${String(i).padStart(3, '0')}${String(k).padStart(8, '0')}`);
      await call('/api/ingest/products', {
        shop: c.shop,
        products: c.barcodes.map((barcode, k) => ({ barcode, product_name: `B8 ${i}/${k}` })),
      });
    }
    const VARIANTS = 97;
    const linesJson = chosen.map((c) =>
      Array.from({ length: VARIANTS }, (_, n) =>
        JSON.stringify(c.barcodes.map((barcode, k) => ({ barcode, on_hand_qty: ((n + k) % 97) + 1, available_qty: (n + k) % 89 }))),
      ),
    );
    const sent = new Map<string, number>();
    const bodyOf = (shopIndex: number, location: string): string => {
      const key = `${shopIndex}/${location}`;
      const n = (sent.get(key) ?? 0) + 1;
      sent.set(key, n);
      return `{"shop":${JSON.stringify(chosen[shopIndex]!.shop)},"source_system":"bench-wms","location_id":"${location}","lines":${linesJson[shopIndex]![n % VARIANTS]!}}`;
    };
    const snapshotsStored = async () =>
      (await db!.query<{ n: number }>(`SELECT count(*)::int AS n FROM agent_runtime.command_results WHERE kind = 'inventory.snapshot'`))
        .rows[0]!.n;
    const outboxPending = async () =>
      (await db!.query<{ n: number }>('SELECT count(*)::int AS n FROM agent_runtime.outbox WHERE published_at IS NULL')).rows[0]!.n;
    const drainOutbox = async (timeoutS = 120) => {
      const deadline = performance.now() + timeoutS * 1000;
      while ((await outboxPending()) > 0) {
        if (performance.now() > deadline)
          throw new Error(`B8: the relay left ${await outboxPending()} outbox rows unpublished for ${timeoutS} s`);
        await sleep(200);
      }
    };
    // First snapshot of every location (creates the levels), one at a time.
    for (const [i, c] of chosen.entries()) {
      for (const location of c.locations) {
        const r = await post(setupAgent, gateways[0]!.port, SNAPSHOT, bodyOf(i, location));
        if (r.status !== 200) throw new Error(`B8: seeding snapshot answered ${r.status}: ${r.text.slice(0, 300)}`);
      }
    }
    setupAgent.destroy();
    await drainOutbox();
    const seeded = await snapshotsStored();
    say(
      `B8: ${chosen.length} shops (${chosen.map((c) => c.partition).join(',')} by partition), ${locationsPerShop} location(s) each, ${s.lines_per_request} products; seeded`,
    );

    const clientTargets = Array.from({ length: s.clients }, (_, c) => ({
      shopIndex: c % chosen.length,
      location: chosen[c % chosen.length]!.locations[Math.floor(c / chosen.length)]!,
    }));

    // --- the closed loop, over whichever gateways are in `active` (round-robin per request) ---
    let active: Service[] = [];
    let rr = 0;
    const agents = new Map<Service, Agent>();
    const agentOf = (g: Service) => {
      let a = agents.get(g);
      if (!a) agents.set(g, (a = new Agent({ keepAlive: true, maxSockets: s.clients })));
      return a;
    };
    let accepted = 0;
    const loop = (stopAt: () => boolean) => {
      const completions: Completion[] = [];
      const done = Promise.all(
        clientTargets.map(async (t) => {
          while (!stopAt()) {
            const gi = rr++ % active.length;
            const g = active[gi]!;
            const body = bodyOf(t.shopIndex, t.location);
            const start = performance.now();
            const r = await post(agentOf(g), g.port, SNAPSHOT, body).catch(() => ({ status: 0, text: '' }));
            const end = performance.now();
            let good = false;
            if (r.status === 200 || r.status === 202) accepted++;
            if (r.status === 200) {
              const reply = JSON.parse(r.text) as { lines_upserted?: number; lines_stale?: number };
              good = reply.lines_upserted === s.lines_per_request && reply.lines_stale === 0;
            }
            completions.push({ at: end, ms: end - start, status: r.status, good, gateway: gi });
            if (r.status !== 200 && r.status !== 202) await sleep(100); // a refusal: do not spin
          }
        }),
      );
      return { completions, done };
    };

    // --- lag sampled every second, CPU of the processes ---
    const lagSamples: Array<{ at: number; lag: number }> = [];
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const at = performance.now();
        const lag = await lagNow().catch(() => null);
        if (lag !== null) lagSamples.push({ at, lag });
        await sleep(Math.max(0, s.lag_sample_ms - (performance.now() - at)));
      }
    })();
    const groupsNow = (g: Service[], p: Service[]) => ({
      gateways: g.map((x) => x.pid()).filter((x): x is number => x !== null),
      projectors: p.map((x) => x.pid()).filter((x): x is number => x !== null),
      brokers: cluster.nodes.map((n) => n.pid()),
      load_generator: [process.pid],
      postgres: postgresPids(),
    });

    const summarise = (
      name: string,
      g: number,
      p: number,
      completions: Completion[],
      from: number,
      to: number,
      c0: ReturnType<typeof cpuSnapshot>,
      c1: ReturnType<typeof cpuSnapshot>,
      la0: number[],
      la1: number[],
      assignment: number[],
    ): B8Config => {
      const inWindow = completions.filter((x) => x.at >= from && x.at < to);
      const ok = inWindow.filter((x) => x.status === 200).map((x) => x.ms);
      const statuses: Record<string, number> = {};
      for (const x of inWindow) statuses[String(x.status)] = (statuses[String(x.status)] ?? 0) + 1;
      const seconds = (to - from) / 1000;
      const lags = lagSamples.filter((x) => x.at >= from && x.at < to).map((x) => x.lag);
      const wall = (c1.at - c0.at) / 1000;
      const coresOf = (k: string) => round((c1.ticks[k]! - c0.ticks[k]!) / CLK_TCK / wall, 2);
      const machineBusy = round(((c1.machine.busy - c0.machine.busy) / Math.max(1, c1.machine.total - c0.machine.total)) * cores, 2);
      const cpu: B8Cpu = {
        gateways_cores: coresOf('gateways'),
        projectors_cores: coresOf('projectors'),
        brokers_cores: coresOf('brokers'),
        load_generator_cores: coresOf('load_generator'),
        postgres_all_cores: coresOf('postgres'),
        machine_busy_cores: machineBusy,
        other_processes_cores: 0,
        pipeline_and_brokers_share: 0,
        machine_share: round(machineBusy / cores, 3),
      };
      cpu.other_processes_cores = round(
        Math.max(
          0,
          machineBusy - cpu.gateways_cores - cpu.projectors_cores - cpu.brokers_cores - cpu.load_generator_cores - cpu.postgres_all_cores,
        ),
        2,
      );
      cpu.pipeline_and_brokers_share = round((cpu.gateways_cores + cpu.projectors_cores + cpu.brokers_cores) / cores, 3);
      const r: B8Config = {
        name,
        gateways: g,
        projectors: p,
        seconds: round(seconds, 1),
        requests: inWindow.length,
        statuses,
        accepted_lines_per_s: Math.round((inWindow.filter((x) => x.good).length * s.lines_per_request) / seconds),
        requests_per_s: round(inWindow.length / seconds, 1),
        p50_ms: round(percentile(ok, 50), 1),
        p95_ms: round(percentile(ok, 95), 1),
        p99_ms: round(percentile(ok, 99), 1),
        max_ms: round(Math.max(0, ...ok), 1),
        bad_replies: inWindow.filter((x) => x.status === 200 && !x.good).length,
        lag_max: lags.length ? Math.max(...lags) : null,
        lag_mean: lags.length ? round(lags.reduce((a, b) => a + b, 0) / lags.length, 1) : null,
        lag_samples: lags.length,
        cpu,
        loadavg_start: la0,
        loadavg_end: la1,
        assignment,
      };
      say(
        `B8 ${name}: ${r.accepted_lines_per_s} lines/s (${r.requests} requests, p50/p99 ${r.p50_ms}/${r.p99_ms} ms), statuses ${JSON.stringify(statuses)}, lag max ${r.lag_max}, ` +
          `CPU cores: gateways ${cpu.gateways_cores}, projectors ${cpu.projectors_cores}, brokers ${cpu.brokers_cores}, load generator ${cpu.load_generator_cores}, postgres (all) ${cpu.postgres_all_cores}, other processes ${cpu.other_processes_cores}, machine ${cpu.machine_busy_cores}/${cores}; load average ${la1.join(' ')}`,
      );
      return r;
    };

    const label = (g: number, p: number) => `${g} gateway${g > 1 ? 's' : ''} + ${p} projector${p > 1 ? 's' : ''}`;
    /** CPU and load average over [from, to) of a loop already running, summarised as one configuration. */
    const measureWindow = async (
      g: number,
      p: number,
      completions: Completion[],
      from: number,
      to: number,
      assignment: Awaited<ReturnType<typeof waitStable>>['assignment'],
    ): Promise<B8Config> => {
      await sleep(from - performance.now());
      const groups = groupsNow(gateways.slice(0, g), projectors.slice(0, p));
      const c0 = cpuSnapshot(groups);
      const la0 = loadavg();
      await sleep(to - performance.now());
      const c1 = cpuSnapshot(groups);
      const la1 = loadavg();
      return summarise(label(g, p), g, p, completions, from, to, c0, c1, la0, la1, assignment);
    };

    /** Runs warm-up + window of closed-loop load on the given services. */
    const measure = async (g: number, p: number): Promise<{ config: B8Config; completions: Completion[] }> => {
      active = gateways.slice(0, g);
      const assignment = (await waitStable(p)).assignment;
      const from = performance.now() + s.warmup_seconds * 1000;
      const to = from + s.seconds * 1000;
      const { completions, done } = loop(() => performance.now() >= to);
      const config = await measureWindow(g, p, completions, from, to, assignment);
      await done;
      return { config, completions };
    };

    const configs: B8Config[] = [];
    const events: B8Event[] = [];
    const ensureRunning = async (g: number, p: number) => {
      for (const x of gateways.slice(0, g)) if (!x.running()) await x.start();
      for (const x of projectors.slice(0, p)) if (!x.running()) await x.start();
      for (const x of projectors.slice(p)) if (x.running()) await x.stop();
    };
    // Every configuration but the last is measured on its own; the last (one projector more than
    // the one before) is reached by a join under load, measured, and left again under load.
    const last = s.configurations[s.configurations.length - 1]!;
    const before = s.configurations[s.configurations.length - 2];
    const rebalanceStage = before !== undefined && before[0] === last[0] && last[1] === before[1] + 1;
    for (const [g, p] of rebalanceStage ? s.configurations.slice(0, -1) : s.configurations) {
      await ensureRunning(g, p);
      await drainOutbox();
      configs.push((await measure(g, p)).config);
    }

    if (rebalanceStage && before) {
      const [g, p] = last;
      await ensureRunning(before[0], before[1]);
      await drainOutbox();
      active = gateways.slice(0, g);
      await waitStable(before[1]);
      const joiner = projectors[p - 1]!;
      let stop = false;
      const { completions, done } = loop(() => stop);
      const loadStart = performance.now();
      const steadyFrom = loadStart + s.warmup_seconds * 1000;
      const steadyTo = steadyFrom + s.steady_before_join_seconds * 1000;
      await sleep(steadyTo - performance.now());
      const gaps = (from: number, to: number) => {
        const ats = completions
          .filter((x) => x.at >= from && x.at < to)
          .map((x) => x.at)
          .sort((a, b) => a - b);
        const out: number[] = [];
        let prev = from;
        for (const a of ats) {
          out.push(a - prev);
          prev = a;
        }
        out.push(to - prev);
        return out;
      };
      const steadyGaps = gaps(steadyFrom, steadyTo);
      const steadyReplies = completions.filter((x) => x.at >= steadyFrom && x.at < steadyTo && x.status === 200).map((x) => x.ms);
      const reference = { max: Math.max(...steadyGaps), p99: percentile(steadyGaps, 99), reply99: percentile(steadyReplies, 99) };
      say(
        `B8: steady ${before[0]} + ${before[1]} reference: longest gap between replies ${round(reference.max)} ms (p99 ${round(reference.p99)} ms), reply p99 ${round(reference.reply99)} ms`,
      );

      /** Watches the group from `at` until Stable with the members of `processes` projectors. */
      const watchEvent = async (kind: 'join' | 'leave', processes: number, action: () => Promise<void>): Promise<B8Event> => {
        const members = processes * membersPerProcess;
        const at = performance.now();
        const wall = Date.now();
        let seen: number | null = null;
        let settled: number | null = null;
        let processMs = 0;
        const acted = action().then(() => (processMs = performance.now() - at));
        const deadline = at + 120_000;
        for (;;) {
          const d = await describe().catch(() => null);
          const now = performance.now();
          if (d && d.state !== 'Stable' && seen === null) seen = now - at;
          if (
            d &&
            d.state === 'Stable' &&
            d.members === members &&
            d.assignment.reduce((a, b) => a + b, 0) === s.partitions &&
            (seen !== null || processMs > 0)
          ) {
            settled = now - at;
            break;
          }
          if (now > deadline) break;
          await sleep(100);
        }
        await acted;
        const end = at + Math.max(settled ?? 0, processMs) + 2000;
        await sleep(Math.max(0, at + 15_000 - performance.now()));
        const window = completions.filter((x) => x.at >= at && x.at < end);
        const perSecond = Array.from(
          { length: 20 },
          (_, k) => completions.filter((x) => x.at >= at + (k - 5) * 1000 && x.at < at + (k - 4) * 1000).length,
        );
        const lines = projectorLogLines(
          logDir,
          projectors.map((x) => x.name),
          wall,
          wall + (end - at),
        );
        const e: B8Event = {
          kind,
          stall_ms: round(Math.max(...gaps(at, end)), 0),
          steady_max_gap_ms: round(reference.max, 0),
          steady_p99_gap_ms: round(reference.p99, 0),
          max_reply_ms: round(Math.max(0, ...window.filter((x) => x.status === 200).map((x) => x.ms)), 0),
          steady_p99_reply_ms: round(reference.reply99, 0),
          rebalance_seen_after_ms: seen === null ? null : round(seen, 0),
          settled_after_ms: settled === null ? null : round(settled, 0),
          process_ms: round(processMs, 0),
          completions_per_s: perSecond,
          projector_log_lines: lines,
        };
        say(
          `B8 ${kind}: longest stall in replies ${e.stall_ms} ms (steady: ${e.steady_max_gap_ms} ms), slowest reply ${e.max_reply_ms} ms (steady p99 ${e.steady_p99_reply_ms} ms), ` +
            `rebalance seen after ${e.rebalance_seen_after_ms} ms, group settled after ${e.settled_after_ms} ms, process ${e.process_ms} ms; replies/s ${perSecond.join(' ')}`,
        );
        return e;
      };

      events.push(await watchEvent('join', p, () => joiner.start()));
      const assignment = (await waitStable(p)).assignment;
      // The 2 + 3 window, on the same loop, once the group has settled.
      const from = performance.now() + 1000;
      configs.push(await measureWindow(g, p, completions, from, from + s.seconds * 1000, assignment));
      events.push(await watchEvent('leave', before[1], () => joiner.stop()));
      await sleep(Math.max(0, s.after_leave_seconds * 1000 - 15_000));
      stop = true;
      await done;
    }
    sampling = false;
    await sampler;
    for (const a of agents.values()) a.destroy();

    // Nothing lost: every accepted snapshot has its stored result once the group has caught up.
    const deadline = performance.now() + 120_000;
    while ((await lagNow().catch(() => 1)) > 0 && performance.now() < deadline) await sleep(500);
    const stored = (await snapshotsStored()) - seeded;
    say(`B8: ${accepted} snapshots accepted, ${stored} results stored`);
    ok = true;
    return {
      settings: s,
      kafka_version: kafkaVersion(),
      cluster: { brokers: cluster.brokers, started_seconds: clusterSeconds },
      shops: chosen.map((c) => ({ shop: c.shop, partition: c.partition, locations: c.locations.length })),
      configs,
      events,
      accepted,
      stored,
      nothing_lost: stored >= accepted && configs.every((c) => c.bad_replies === 0),
      cores,
      loadavg_before: loadavgBefore,
      log_dir: logDir,
    };
  } finally {
    await host.stopAll().catch(() => {});
    await db?.end().catch(() => {});
    await admin.disconnect().catch(() => {});
    await cluster.stop().catch(() => {});
    // The cluster's data (replicated command log) is only worth keeping to read a failure.
    if (ok) rmSync(dataDir, { recursive: true, force: true });
    say(`B8: cluster stopped; service logs in ${logDir}`);
  }
}

/** kafkajs lines (group, rebalance, coordinator) the projectors logged between two wall-clock times. */
function projectorLogLines(logDir: string, names: string[], fromMs: number, toMs: number): string[] {
  const out: string[] = [];
  for (const name of names) {
    let text = '';
    try {
      text = readFileSync(join(logDir, `${name}.log`), 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n')) {
      if (!line.startsWith('{')) continue;
      try {
        const j = JSON.parse(line) as { time?: number | string; msg?: string; component?: string; level?: number };
        const t = typeof j.time === 'number' ? j.time : Date.parse(String(j.time));
        if (t < fromMs || t > toMs) continue;
        if (j.component === 'kafka' || /rebalanc|join|group|partition/i.test(j.msg ?? ''))
          out.push(`${name} +${t - fromMs} ms: ${String(j.msg).slice(0, 160)}`);
      } catch {
        // not a log line of ours
      }
    }
  }
  return out.slice(0, 30);
}
