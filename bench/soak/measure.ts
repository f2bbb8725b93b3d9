// The soak's two measuring loops: the capacity it runs a fraction of, and the sample of every minute.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { Deployment, SoakBroker } from './stack.ts';
import type { Attempt } from './client.ts';
import type { Traffic } from './traffic.ts';
import {
  bufferBlocks,
  dirBytes,
  groupLag,
  heapUsedMb,
  LowWater,
  sampleProcess,
  sampleTables,
  walBytes,
  windowStats,
  type ProcessSample,
  type TableSample,
  type WindowStats,
} from './sampler.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Capacity: `workers` clients in a closed loop (each sends its next request of the mix when the last
 * is answered) for `seconds`, then the time until the projectors have applied all of it (`drained`).
 * It is the requests accepted (200/202) over the last two thirds (the first third warms the pipeline
 * up), divided by the time from the start of those two thirds until they were all applied. A 202 is
 * an answer before the command is applied: counted per second of answers alone, a closed loop of
 * async and slow requests measured the gateway, not the pipeline, and a soak at "half" of that ran
 * over capacity with a growing lag.
 */
export async function measureCapacity(
  traffic: Traffic,
  shops: number,
  seconds: number,
  drained: () => Promise<boolean>,
  workers = 32,
): Promise<{ perSecond: number; accepted: number; drainSeconds: number }> {
  const until = Date.now() + seconds * 1000;
  const from = Date.now() + (seconds * 1000) / 3;
  let accepted = 0;
  await Promise.all(
    Array.from({ length: workers }, async (_, w) => {
      for (let n = w; Date.now() < until; n += workers) {
        const r = await traffic.fireOne(n % shops);
        if ((r.status === 200 || r.status === 202) && r.endAt >= from) accepted += 1;
      }
    }),
  );
  const loopEnd = Date.now();
  const giveUp = loopEnd + 5 * 60_000;
  while (!(await drained()) && Date.now() < giveUp) await sleep(250);
  const end = Date.now();
  return { perSecond: accepted / ((end - from) / 1000), accepted, drainSeconds: (end - loopEnd) / 1000 };
}

export interface Sample {
  /** Seconds since the soak's load started. */
  t: number;
  at: string;
  processes: Record<string, ProcessSample>;
  window: WindowStats;
  lag_offsets: number | null;
  /** The worst partition's lag over the projectors, seconds (projector_lag_seconds). */
  lag_seconds: number | null;
  outbox_unpublished: number;
  wal_written_bytes: number;
  /** Blocks the soak's database found in shared_buffers and blocks it read, in the window. */
  buffer_hits: number;
  buffer_reads: number;
  kafka_log_bytes: number;
  tables: TableSample[];
  /** The soak's own process in the window: a client that stalls adds the stall to every reply time it measures. */
  client: ClientSample;
}

export interface ClientSample {
  event_loop_p99_ms: number;
  event_loop_max_ms: number;
  heap_used_mb: number;
  rss_mb: number;
}

/** One sample: the processes, the replies since the last sample (`window` is drained), the stores. */
export function sampler(d: Deployment, broker: SoakBroker, loadStart: () => number) {
  let lastWal: number | null = null;
  let lastBlocks: { hit: number; read: number } | null = null;
  const window: Attempt[] = [];
  const services = [...d.gateways, ...d.projectors];
  const heapFloor = new LowWater();
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  const client = (): ClientSample => {
    const m = process.memoryUsage();
    const c = {
      event_loop_p99_ms: loop.percentile(99) / 1e6,
      event_loop_max_ms: loop.max / 1e6,
      heap_used_mb: m.heapUsed / 2 ** 20,
      rss_mb: m.rss / 2 ** 20,
    };
    loop.reset();
    return c;
  };
  return {
    onAttempt: (a: Attempt) => void window.push(a),
    /** Between samples: each process's heap used, for the floor of the next sample. */
    poll: async (): Promise<void> => {
      const used = await Promise.all(services.map(heapUsedMb));
      services.forEach((svc, i) => heapFloor.see(svc.name, used[i] ?? null));
    },
    take: async (): Promise<Sample> => {
      const procs = await Promise.all(services.map(sampleProcess));
      services.forEach((svc, i) => {
        heapFloor.see(svc.name, procs[i]!.heap_used_mb);
        procs[i]!.heap_floor_mb = heapFloor.take(svc.name);
      });
      const replies = window.splice(0);
      const [lagOffsets, outbox, wal, tables, blocks] = await Promise.all([
        groupLag(d.stack.kafka, d.stack.topics.commands, d.stack.groupId),
        d.stack.db.query<{ n: number }>('SELECT count(*)::int AS n FROM agent_runtime.outbox WHERE published_at IS NULL'),
        walBytes(d.stack.db),
        sampleTables(d.stack.db),
        bufferBlocks(d.stack.db),
      ]);
      const written = lastWal === null ? 0 : wal - lastWal;
      lastWal = wal;
      const [hits, reads] = lastBlocks === null ? [0, 0] : [blocks.hit - lastBlocks.hit, blocks.read - lastBlocks.read];
      lastBlocks = blocks;
      const lags = procs.map((p) => p.lag_seconds).filter((x): x is number => typeof x === 'number');
      return {
        t: (Date.now() - loadStart()) / 1000,
        at: new Date().toISOString(),
        processes: Object.fromEntries(services.map((s, i) => [s.name, procs[i]!])),
        window: windowStats(replies),
        lag_offsets: lagOffsets,
        lag_seconds: lags.length ? Math.max(...lags) : null,
        outbox_unpublished: outbox.rows[0]?.n ?? 0,
        wal_written_bytes: written,
        buffer_hits: hits,
        buffer_reads: reads,
        kafka_log_bytes: dirBytes(broker.dataDir),
        tables,
        client: client(),
      };
    },
  };
}

/**
 * Heap snapshots on demand: SIGUSR2 to each service (`--heapsnapshot-signal`), one every 10 s so that
 * the processes do not all stop at once; each writes its snapshot into the heap dir.
 */
export function heapSnapshots(d: Deployment, note: (m: string) => void) {
  let taken = 0;
  const take = (why: string, names?: string[]) => {
    const chosen = [...d.gateways, ...d.projectors].filter((s) => !names || names.includes(s.name));
    chosen.forEach((s, i) =>
      setTimeout(() => {
        const pid = s.pid();
        if (!pid) return;
        process.kill(pid, 'SIGUSR2');
        taken += 1;
        note(`heap snapshot of ${s.name} (pid ${pid}): ${why}`);
      }, i * 10_000),
    );
  };
  // the last one is sent 30 s after the first; writing it takes seconds more
  return { take, taken: () => taken, wait: () => sleep(45_000) };
}
