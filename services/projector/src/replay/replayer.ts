import type { SchemaRegistry } from '@ingest/contracts';
import type { Pool, PoolClient } from '@ingest/db';
import { runConsumer, type IncomingMessage, type Kafka } from '@ingest/kafka';
import { applyCommand, isDeterministicDbError } from '../applyCommand.ts';
import { createCommandDecoder } from '../decodeCommand.ts';
import { claimCommand } from '../runtimeStore.ts';

export const REPLAY_PROJECTOR = 'replay';

export interface ReplayProgress {
  applied: number;
  skipped: number;
  done: number;
  total: number;
  commandsPerSecond: number;
  etaSeconds: number | null;
}

export interface ReplayResult {
  /** False when stopped by the signal before the end of the log. */
  complete: boolean;
  applied: number;
  /** Already applied (a resumed run) or undecodable commands. */
  skipped: number;
  seconds: number;
  commandsPerSecond: number;
}

export interface ReplayOptions {
  /** The target database: migrated, empty or holding an earlier run's checkpoints (resume). */
  pool: Pool;
  kafka: Kafka;
  schemas: SchemaRegistry;
  topic: string;
  /** Commands per transaction: a replay commits far less often than the live projector. */
  batchSize?: number;
  /** Partitions replayed side by side (default 3); the pool needs as many connections. */
  concurrency?: number;
  onProgress?: (p: ReplayProgress) => void;
  progressEveryMs?: number;
  onWarn?: (msg: string, detail: object) => void;
  /** Stops the replay between two batches; a later call resumes from the checkpoints. */
  signal?: AbortSignal;
}

async function loadCheckpoints(pool: Pool, topic: string): Promise<Map<number, number>> {
  const { rows } = await pool.query<{ kafka_partition: number; next_offset: number }>(
    'SELECT kafka_partition, next_offset FROM agent_runtime.projector_checkpoints WHERE projector = $1 AND kafka_topic = $2',
    [REPLAY_PROJECTOR, topic],
  );
  return new Map(rows.map((r) => [r.kafka_partition, r.next_offset]));
}

async function saveCheckpoint(tx: PoolClient, topic: string, partition: number, nextOffset: number): Promise<void> {
  await tx.query(
    `INSERT INTO agent_runtime.projector_checkpoints (projector, kafka_topic, kafka_partition, next_offset, updated_at)
     VALUES ($1, $2, $3, $4, now())
     ON CONFLICT (projector, kafka_topic, kafka_partition) DO UPDATE SET next_offset = EXCLUDED.next_offset, updated_at = now()`,
    [REPLAY_PROJECTOR, topic, partition, nextOffset],
  );
}

/**
 * D26: rebuilds the read model of `pool`'s database from offset 0 of the command log (or from its
 * checkpoints, when resuming), up to the end of the log as it was when the replay started. The
 * same deciders as live; many commands per transaction, each under a savepoint so a command that
 * failed live fails alone here too; the checkpoint commits with the batch. No outbox rows and no
 * stored replies: the events were published and the callers answered live.
 */
export async function replayCommandLog(opts: ReplayOptions): Promise<ReplayResult> {
  const { pool, topic } = opts;
  const batchSize = opts.batchSize ?? 500;
  const decode = createCommandDecoder(opts.schemas);
  const admin = opts.kafka.admin();
  await admin.connect();
  const offsets = await admin.fetchTopicOffsets(topic).finally(() => admin.disconnect());
  const checkpoints = await loadCheckpoints(pool, topic);

  const end = new Map(offsets.map((o) => [o.partition, Number(o.high)]));
  const start = new Map(offsets.map((o) => [o.partition, Math.max(Number(o.low), checkpoints.get(o.partition) ?? 0)]));
  const pending = new Set([...end].filter(([p, high]) => (start.get(p) ?? 0) < high).map(([p]) => p));
  const total = [...end].reduce((s, [p, high]) => s + Math.max(0, high - (start.get(p) ?? 0)), 0);
  let applied = 0;
  let skipped = 0;
  const started = Date.now();

  const progress = (): ReplayProgress => {
    const done = applied + skipped;
    const seconds = (Date.now() - started) / 1000;
    const rate = seconds > 0 ? done / seconds : 0;
    return { applied, skipped, done, total, commandsPerSecond: rate, etaSeconds: rate > 0 ? (total - done) / rate : null };
  };
  const ticker = opts.onProgress ? setInterval(() => opts.onProgress?.(progress()), opts.progressEveryMs ?? 1000) : null;

  const applyBatch = async (messages: IncomingMessage[]): Promise<void> => {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      for (const m of messages) {
        const at = { topic: m.topic, partition: m.partition, offset: m.offset };
        const decoded = decode(m.value);
        if (!decoded.ok) {
          skipped++;
          opts.onWarn?.('undecodable command skipped', { ...at, error: decoded.error });
          continue;
        }
        await client.query('SAVEPOINT command');
        try {
          if (await applyCommand(client, decoded.command, at, null)) applied++;
          else skipped++;
          await client.query('RELEASE SAVEPOINT command');
        } catch (err) {
          if (!isDeterministicDbError(err)) throw err;
          // It failed live too (a stored 500): mark it processed, as live did, and go on.
          await client.query('ROLLBACK TO SAVEPOINT command');
          await claimCommand(client, decoded.command, at);
          skipped++;
        }
      }
      const last = messages[messages.length - 1];
      if (last) await saveCheckpoint(client, topic, last.partition, Number(last.offset) + 1);
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK').catch(() => {});
      throw err;
    } finally {
      client.release();
    }
  };

  let finish: () => void = () => {};
  let fail: (err: unknown) => void = () => {};
  const finished = new Promise<void>((resolve, reject) => {
    finish = resolve;
    fail = reject;
  });
  if (pending.size === 0) finish();
  opts.signal?.addEventListener('abort', () => finish(), { once: true });

  const consumer = await runConsumer(opts.kafka, {
    groupId: `replay-${started}-${Math.floor(Math.random() * 1e9)}`,
    topics: [topic],
    autoCommit: false,
    startAt: new Map([...start].map(([p, o]) => [p, String(o)])),
    partitionsConsumedConcurrently: opts.concurrency ?? 3,
    eachBatch: async (messages, ctx) => {
      try {
        const partition = messages[0]?.partition;
        if (partition === undefined || !pending.has(partition)) return;
        const high = end.get(partition) ?? 0;
        const wanted = messages.filter((m) => Number(m.offset) >= (start.get(partition) ?? 0) && Number(m.offset) < high);
        for (let i = 0; i < wanted.length && ctx.isRunning() && !opts.signal?.aborted; i += batchSize) {
          const chunk = wanted.slice(i, i + batchSize);
          await applyBatch(chunk);
          const last = chunk[chunk.length - 1];
          if (last) {
            start.set(partition, Number(last.offset) + 1);
            ctx.resolveOffset(last.offset);
          }
          await ctx.heartbeat();
        }
        if ((start.get(partition) ?? 0) >= high) {
          pending.delete(partition);
          if (pending.size === 0) finish();
        }
      } catch (err) {
        fail(err);
        throw err;
      }
    },
  });
  try {
    await finished;
  } finally {
    if (ticker) clearInterval(ticker);
    await consumer.stop();
  }
  const seconds = (Date.now() - started) / 1000;
  return { complete: pending.size === 0, applied, skipped, seconds, commandsPerSecond: seconds > 0 ? (applied + skipped) / seconds : 0 };
}
