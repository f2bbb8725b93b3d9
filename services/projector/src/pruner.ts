import type { Pool } from '@ingest/db';
import type { Logger, Registry } from '@ingest/runtime';
import { prunerMetrics } from './metrics.ts';

export interface PrunerOptions {
  pool: Pool;
  log: Logger;
  registry: Registry;
  /** Stored results, request rows and resolved parked commands older than this go. */
  resultRetentionMs: number;
  /** Per-command markers older than this go; the checkpoint keeps exactly-once (docs/operations.md#retention). */
  markerRetentionMs: number;
  /** Idempotency-Key header rows older than this go (IDEMPOTENCY_KEY_TTL). */
  idempotencyKeyTtlMs: number;
  intervalMs: number;
  /** Rows per DELETE: short statements, short row locks, no long-held table lock. */
  batchSize?: number;
}

export interface Pruner {
  /** One full round now (tests, operators); resolves with the rows deleted per table. */
  runOnce(): Promise<Record<string, number>>;
  stop(): Promise<void>;
}

interface Target {
  table: string;
  where: string;
  retention: 'results' | 'markers' | 'keys' | null;
  /** The time column whose pruned span is recorded (so a pruned command answers `expired`, not 404). */
  span?: string;
}

// Each target is found through an index (migrations/1763900000000_fault-tolerance.sql).
const TARGETS: Target[] = [
  { table: 'agent_runtime.processed_commands', where: "processed_at < now() - $1 * interval '1 millisecond'", retention: 'markers' },
  {
    table: 'agent_runtime.command_results',
    where: "created_at < now() - $1 * interval '1 millisecond'",
    retention: 'results',
    span: 'created_at',
  },
  {
    table: 'agent_runtime.command_requests',
    where: "received_at < now() - $1 * interval '1 millisecond'",
    retention: 'results',
    span: 'received_at',
  },
  {
    table: 'agent_runtime.parked_commands',
    where: "resolved_at IS NOT NULL AND resolved_at < now() - $1 * interval '1 millisecond'",
    retention: 'results',
  },
  // The Idempotency-Key header's rows, after IDEMPOTENCY_KEY_TTL.
  { table: 'agent_runtime.request_keys', where: "created_at < now() - $1 * interval '1 millisecond'", retention: 'keys' },
  // Published rows have done their work (the audit records stay in their log tables).
  { table: 'agent_runtime.outbox', where: 'published_at IS NOT NULL', retention: null },
];

const PRUNE_LOCK = 0x7072756e65; // 'prune': one pruner per database at a time

/**
 * Keeps agent_runtime bounded (docs/operations.md#retention): deletes what has passed its retention
 * window in small batches, in the background, one process at a time. Delta idempotency keys (D19:
 * kept indefinitely), checkpoints and daily-run records are small and stay.
 */
export function startPruner(opts: PrunerOptions): Pruner {
  const batchSize = opts.batchSize ?? 5000;
  const { deleted, seconds, parkedOpen } = prunerMetrics(opts.registry);
  let stopped = false;
  let running: Promise<unknown> = Promise.resolve();

  const runOnce = async (): Promise<Record<string, number>> => {
    const counts: Record<string, number> = {};
    const client = await opts.pool.connect();
    try {
      const lock = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1) AS ok', [PRUNE_LOCK]);
      if (lock.rows[0]?.ok !== true) return counts;
      try {
        const started = performance.now();
        for (const t of TARGETS) {
          const window =
            t.retention === 'markers'
              ? opts.markerRetentionMs
              : t.retention === 'results'
                ? opts.resultRetentionMs
                : t.retention === 'keys'
                  ? opts.idempotencyKeyTtlMs
                  : null;
          const params = window === null ? [batchSize] : [window, batchSize];
          const limit = window === null ? '$1' : '$2';
          let total = 0;
          for (;;) {
            if (stopped) break;
            const del = `DELETE FROM ${t.table} WHERE ctid = ANY(ARRAY(SELECT ctid FROM ${t.table} WHERE ${t.where} LIMIT ${limit}))`;
            const r = t.span
              ? await client.query(
                  `WITH d AS (${del} RETURNING ${t.span} AS at)
                   INSERT INTO agent_runtime.pruned_span (what, oldest, newest)
                   SELECT 'commands', min(at), max(at) FROM d HAVING count(*) > 0
                   ON CONFLICT (what) DO UPDATE SET oldest = LEAST(pruned_span.oldest, EXCLUDED.oldest), newest = GREATEST(pruned_span.newest, EXCLUDED.newest)
                   RETURNING (SELECT count(*)::int FROM d) AS n`,
                  params,
                )
              : await client.query(del, params);
            const n = t.span ? Number((r.rows[0] as { n?: number } | undefined)?.n ?? 0) : (r.rowCount ?? 0);
            total += n;
            deleted.inc({ table: t.table }, n);
            if (n < batchSize) break;
          }
          counts[t.table] = total;
        }
        const open = await client.query<{ n: number }>(
          'SELECT count(*)::int AS n FROM agent_runtime.parked_commands WHERE resolved_at IS NULL',
        );
        parkedOpen.set(open.rows[0]?.n ?? 0);
        const ms = performance.now() - started;
        seconds.observe(ms / 1000);
        const total = Object.values(counts).reduce((a, b) => a + b, 0);
        if (total > 0) opts.log.info({ deleted: counts, ms: Math.round(ms) }, 'pruned agent_runtime');
      } finally {
        await client.query('SELECT pg_advisory_unlock($1)', [PRUNE_LOCK]);
      }
    } finally {
      client.release();
    }
    return counts;
  };

  const timer = setInterval(() => {
    running = runOnce().catch((err: unknown) => opts.log.warn({ err }, 'pruning round failed; next round will retry'));
  }, opts.intervalMs);
  timer.unref();

  return {
    runOnce,
    stop: async () => {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
