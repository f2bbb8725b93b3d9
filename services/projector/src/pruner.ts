import {
  commandRequests,
  commandResults,
  outbox,
  parkedCommands,
  processedCommands,
  requestKeys,
  type Pool,
  type PruneTarget,
} from '@ingest/db';
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

/** A table to prune, and the retention window its rows are kept for (null: none, they go once done). */
interface Target {
  prune: PruneTarget;
  retention: 'results' | 'markers' | 'keys' | null;
}

// The statements are the ledger's; a pruned result or request widens the pruned span (so a pruned
// command answers `expired`, not 404).
const TARGETS: Target[] = [
  { prune: processedCommands.prune, retention: 'markers' },
  // Requests before results: a request goes once its result exists (commandRequests.prune), so the
  // result must still be there when its request is looked at.
  { prune: commandRequests.prune, retention: 'results' },
  { prune: commandResults.prune, retention: 'results' },
  { prune: parkedCommands.prune, retention: 'results' },
  // The Idempotency-Key header's rows, after IDEMPOTENCY_KEY_TTL.
  { prune: requestKeys.prune, retention: 'keys' },
  // Published rows have done their work (the audit records stay in their log tables).
  { prune: outbox.prune, retention: null },
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
          let total = 0;
          for (;;) {
            if (stopped) break;
            const n = await t.prune.deleteBatch(client, window, batchSize);
            total += n;
            deleted.inc({ table: t.prune.table }, n);
            if (n < batchSize) break;
          }
          counts[t.prune.table] = total;
        }
        parkedOpen.set(await parkedCommands.countOpen(client));
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
