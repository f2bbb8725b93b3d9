// What the soak records every minute: per process (from /proc and its own /metrics), per window
// (the client's replies), and the stores (PostgreSQL's tables, WAL and the broker's log size).
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type pg from 'pg';
import type { Kafka } from '@ingest/kafka';
import { procStat } from '../lib/processSampler.ts';
import type { Service } from '../../tests/faults/procs.ts';
import type { Attempt } from './client.ts';
import { percentile } from './verdicts.ts';

/** The sum of every series of metric `name` in a Prometheus text exposition whose labels contain `label` (null: none). */
export function metricSum(text: string, name: string, label = ''): number | null {
  let sum: number | null = null;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name) || (line[name.length] !== ' ' && line[name.length] !== '{')) continue;
    if (label && !line.includes(label)) continue;
    const v = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (Number.isFinite(v)) sum = (sum ?? 0) + v;
  }
  return sum;
}

/** The largest series of `name` (the worst partition's lag), null when absent. */
export function metricMax(text: string, name: string): number | null {
  let max: number | null = null;
  for (const line of text.split('\n'))
    if (line.startsWith(`${name}{`) || line.startsWith(`${name} `))
      max = Math.max(max ?? -Infinity, Number(line.slice(line.lastIndexOf(' ') + 1)));
  return max;
}

export interface ProcessSample {
  rss_mb: number | null;
  heap_used_mb: number | null;
  /**
   * The lowest V8 heap used of the polls since the last sample (every few seconds): the floor of the
   * heap's sawtooth, what is live after a collection. Heap used at one instant also counts the garbage
   * not yet collected (up to the young generation's size), which made the minute samples swing
   * 22-76 MB around a flat floor; a leak raises the floor.
   */
  heap_floor_mb?: number | null;
  /**
   * V8 heap used right after the service's last major collection (nodejs_heap_live_bytes): the live
   * heap, without the floating garbage the floor can still hold. What the heap verdict reads.
   */
  heap_live_mb?: number | null;
  /** V8 heap used by the old and the code spaces: whether a rising floor is data or compiled code. */
  heap_old_mb?: number | null;
  heap_code_mb?: number | null;
  event_loop_p99_ms: number | null;
  handles: number | null;
  sockets: number | null;
  pool_total: number | null;
  pool_idle: number | null;
  pool_waiting: number | null;
  /** Projectors: the worst partition's lag, in seconds, and the relay's unpublished rows (leader only). */
  lag_seconds?: number | null;
  outbox_pending?: number | null;
  /** Projectors: rows the pruner deleted and VACUUM/ANALYZE runs of the upkeep, since the process started. */
  pruned_rows?: number | null;
  upkeep_runs?: number | null;
}

/** A service's /metrics text; empty when it does not answer within 5 s. */
const metricsText = (svc: Service): Promise<string> =>
  fetch(svc.url('/metrics'), { signal: AbortSignal.timeout(5000) })
    .then((r) => r.text())
    .catch(() => '');

/** V8 heap used of one service (MB), from its /metrics; null when it does not answer. */
export async function heapUsedMb(svc: Service): Promise<number | null> {
  const text = await metricsText(svc);
  const b = metricSum(text, 'nodejs_heap_size_used_bytes');
  return b === null ? null : b / 2 ** 20;
}

/** The lowest value seen per process since the last `take` (the heap floor of each sample). */
export class LowWater {
  private readonly lows = new Map<string, number>();
  see(name: string, v: number | null): void {
    if (v === null) return;
    this.lows.set(name, Math.min(v, this.lows.get(name) ?? Infinity));
  }
  take(name: string): number | null {
    const v = this.lows.get(name) ?? null;
    this.lows.delete(name);
    return v;
  }
}

export async function sampleProcess(svc: Service): Promise<ProcessSample> {
  const pid = svc.pid();
  const stat = pid ? procStat(pid) : null;
  const text = await metricsText(svc);
  const mb = (x: number | null) => (x === null ? null : x / 2 ** 20);
  const idle = metricSum(text, 'db_pool_connections', 'state="idle"');
  const inUse = metricSum(text, 'db_pool_connections', 'state="in_use"');
  const lag = metricSum(text, 'nodejs_eventloop_lag_p99_seconds');
  return {
    rss_mb: stat?.rss_mb ?? null,
    heap_used_mb: mb(metricSum(text, 'nodejs_heap_size_used_bytes')),
    // 0 before the service's first major collection: not measured yet
    heap_live_mb: mb(metricSum(text, 'nodejs_heap_live_bytes') || null),
    heap_old_mb: mb(metricSum(text, 'nodejs_heap_space_size_used_bytes', 'space="old"')),
    heap_code_mb: mb(metricSum(text, 'nodejs_heap_space_size_used_bytes', 'space="code"')),
    event_loop_p99_ms: lag === null ? null : lag * 1000,
    handles: metricSum(text, 'nodejs_active_handles'),
    sockets: metricSum(text, 'nodejs_active_handles', 'type="Socket"'),
    pool_total: idle === null || inUse === null ? null : idle + inUse,
    pool_idle: idle,
    pool_waiting: metricSum(text, 'db_pool_waiting_clients'),
    ...(svc.kind === 'projector'
      ? {
          lag_seconds: metricMax(text, 'projector_lag_seconds'),
          outbox_pending: metricSum(text, 'relay_outbox_pending'),
          pruned_rows: metricSum(text, 'prune_rows_deleted_total'),
          upkeep_runs: metricSum(text, 'table_upkeep_total'),
        }
      : {}),
  };
}

export interface WindowStats {
  endpoints: Record<string, { replies: number; p50_ms: number | null; p99_ms: number | null }>;
  status_202: number;
  status_429: number;
  status_503: number;
  status_5xx_other: number;
  no_answer: number;
  retried: number;
}

/** The replies of one window, per endpoint and by status. */
export function windowStats(attempts: Attempt[]): WindowStats {
  const by = new Map<string, number[]>();
  for (const a of attempts) {
    const list = by.get(a.endpoint) ?? [];
    list.push(a.ms);
    by.set(a.endpoint, list);
  }
  const count = (f: (a: Attempt) => boolean) => attempts.filter(f).length;
  return {
    endpoints: Object.fromEntries(
      [...by].sort().map(([e, ms]) => [e, { replies: ms.length, p50_ms: percentile(ms, 50), p99_ms: percentile(ms, 99) }]),
    ),
    status_202: count((a) => a.status === 202),
    status_429: count((a) => a.status === 429),
    status_503: count((a) => a.status === 503),
    status_5xx_other: count((a) => a.status !== null && a.status >= 500 && a.status !== 503),
    no_answer: count((a) => a.status === null),
    retried: count((a) => a.retried),
  };
}

export interface TableSample {
  table: string;
  heap_bytes: number;
  index_bytes: number;
  total_bytes: number;
  live_rows: number;
  dead_rows: number;
  /** Exact count for agent_runtime tables (their verdict), else null. */
  rows: number | null;
}

/** Sizes and row counts of every table of the database; agent_runtime's counted exactly (they are small). */
export async function sampleTables(db: pg.Pool): Promise<TableSample[]> {
  const { rows } = await db.query<{ table: string; heap: string; idx: string; total: string; live: string; dead: string }>(
    `SELECT schemaname || '.' || relname AS table, pg_relation_size(relid) AS heap, pg_indexes_size(relid) AS idx,
            pg_total_relation_size(relid) AS total, n_live_tup AS live, n_dead_tup AS dead
       FROM pg_stat_user_tables ORDER BY 1`,
  );
  const out: TableSample[] = [];
  for (const r of rows) {
    const exact = r.table.startsWith('agent_runtime.')
      ? Number((await db.query<{ n: string }>(`SELECT count(*) AS n FROM ${r.table.replace('.', '."')}"`)).rows[0]!.n)
      : null;
    out.push({
      table: r.table,
      heap_bytes: +r.heap,
      index_bytes: +r.idx,
      total_bytes: +r.total,
      live_rows: +r.live,
      dead_rows: +r.dead,
      rows: exact,
    });
  }
  return out;
}

/** Blocks this database found in PostgreSQL's buffer cache and blocks it had to read (since its stats reset). */
export async function bufferBlocks(db: pg.Pool): Promise<{ hit: number; read: number }> {
  const { rows } = await db.query<{ hit: string; read: string }>(
    'SELECT blks_hit AS hit, blks_read AS read FROM pg_stat_database WHERE datname = current_database()',
  );
  return { hit: Number(rows[0]?.hit ?? 0), read: Number(rows[0]?.read ?? 0) };
}

/** The server's WAL position in bytes (the delta between two samples is the WAL written: the whole server's). */
export async function walBytes(db: pg.Pool): Promise<number> {
  const { rows } = await db.query<{ b: string }>(`SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0') AS b`);
  return Number(rows[0]!.b);
}

/** Commands appended but not committed by the group, over every partition of the command topic. */
export async function groupLag(kafka: Kafka, topic: string, groupId: string): Promise<number | null> {
  const admin = kafka.admin();
  try {
    await admin.connect();
    const [ends, committed] = await Promise.all([admin.fetchTopicOffsets(topic), admin.fetchOffsets({ groupId, topics: [topic] })]);
    const done = new Map((committed[0]?.partitions ?? []).map((p) => [p.partition, Math.max(0, Number(p.offset))]));
    return ends.reduce((s, e) => s + Math.max(0, Number(e.high) - (done.get(e.partition) ?? 0)), 0);
  } catch {
    return null;
  } finally {
    await admin.disconnect().catch(() => {});
  }
}

/** Bytes under `dir` (the broker's data dir: its log segments). */
export function dirBytes(dir: string): number {
  let total = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    try {
      total += e.isDirectory() ? dirBytes(p) : statSync(p).size;
    } catch {
      // a segment deleted while we walk
    }
  }
  return total;
}
