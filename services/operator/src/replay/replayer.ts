import type { SchemaRegistry } from '@ingest/contracts';
import { parkedCommands, processedCommands, projectorCheckpoints, withTransaction, type Pool } from '@ingest/db';
import type { Kafka, RunningConsumer } from '@ingest/kafka';
import {
  applyCommand,
  applyGroup,
  isDeterministicDbError,
  runCommandPipeline,
  type CommandRun,
  type GroupCommand,
} from '@ingest/projection';

/** A replay's checkpoint rows carry this projector name (the ledger's projectorCheckpoints). */
export const REPLAY_PROJECTOR = projectorCheckpoints.REPLAY_PROJECTOR;

/** Next offset per partition of the command topic. */
export type Positions = Map<number, number>;

export interface ReplayProgress {
  applied: number;
  skipped: number;
  done: number;
  total: number;
  commandsPerSecond: number;
  etaSeconds: number | null;
}

export interface ReplayResult {
  /** False when stopped (signal, stop()) before reaching the target. */
  complete: boolean;
  applied: number;
  /** Already applied (a resumed run) or undecodable commands. */
  skipped: number;
  seconds: number;
  commandsPerSecond: number;
}

export interface ReplayOptions {
  /**
   * Where the rebuilt tables are: a migrated scratch database, or a pool whose search path is a
   * shadow schema (D26). Empty, or holding an earlier run's checkpoints (resume).
   */
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
  /** Stops the replay between two batches; a later run resumes from the checkpoints. */
  signal?: AbortSignal;
  /**
   * The live database, whose parked commands say what the live projector did not apply (default:
   * `pool`, right for an in-place rebuild; a scratch database has none of its own).
   */
  parkedFrom?: Pool;
  /**
   * Share of each replayed partition's time spent applying, 1 to 100 (default 100: flat out). After
   * a batch that took t, the partition rests t·(100/busyPercent − 1): the replay shares the
   * database's cores with the live service, and resting leaves them to live commands (B10).
   */
  busyPercent?: number;
}

export interface ReplayRun {
  /** The next offset to replay, per partition (committed with the rows). */
  positions(): Positions;
  /**
   * Replays up to `target` (next offset per partition; a target never moves back) and resolves
   * when every partition has reached it, or when the replay is stopped. Rejects if it failed.
   */
  runTo(target: Positions): Promise<void>;
  reached(target: Positions): boolean;
  progress(): ReplayProgress;
  /** Changes busyPercent while the run goes on (an in-place rebuild's swap catches up flat out). */
  setBusyPercent(percent: number): void;
  stop(): Promise<ReplayResult>;
}

async function topicOffsets(kafka: Kafka, topic: string): Promise<Array<{ partition: number; low: number; high: number }>> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const offsets = await admin.fetchTopicOffsets(topic);
    return offsets.map((o) => ({ partition: o.partition, low: Number(o.low), high: Number(o.high) }));
  } finally {
    await admin.disconnect();
  }
}

/** The end of the command log now (next offset per partition). */
export async function logEnd(kafka: Kafka, topic: string): Promise<Positions> {
  return new Map((await topicOffsets(kafka, topic)).map((o) => [o.partition, o.high]));
}

/**
 * D26: replays the command log into `pool`'s tables from offset 0 (or from its checkpoints, when
 * resuming) with the live deciders. Many commands per transaction (applyBatch: a command that
 * failed live fails alone here too); the checkpoint commits with the batch. No outbox
 * rows and no stored replies: the events were published and the callers answered live.
 *
 * The run follows a target that may move forward (`runTo`), so an in-place rebuild can track the
 * live projector's position up to the moment it swaps; it never passes the target, as a command
 * applied here but not yet live would be skipped live as a duplicate after the swap.
 */
export async function startReplay(opts: ReplayOptions): Promise<ReplayRun> {
  const { pool, topic } = opts;
  const batchSize = opts.batchSize ?? 500;
  const offsets = await topicOffsets(opts.kafka, topic);
  // Resumed from the replay's own checkpoints, in the tables it rebuilds (the search path, D26).
  const checkpoints = await projectorCheckpoints.loadReplay(pool, topic);
  const position: Positions = new Map(offsets.map((o) => [o.partition, Math.max(o.low, checkpoints.get(o.partition) ?? 0)]));
  const origin = new Map(position);
  const target: Positions = new Map(position);
  let applied = 0;
  let skipped = 0;
  let failure: unknown = null;
  let stopped = false;
  const started = Date.now();
  const waiters = new Set<() => void>();
  const wake = () => {
    for (const w of waiters) w();
  };
  let busyPercent = Math.min(100, Math.max(1, opts.busyPercent ?? 100));
  // Partitions waiting for the target to move (or resting): woken when it moves, or the run stops.
  const idle = new Set<() => void>();
  const nudge = () => {
    for (const w of idle) w();
  };
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        idle.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      idle.add(done);
    });
  opts.signal?.addEventListener('abort', wake, { once: true });
  const halted = () => stopped || failure !== null || opts.signal?.aborted === true;

  // A partition the log does not have (yet) has nothing to replay.
  const reached = (t: Positions) => [...t].every(([p, o]) => (position.get(p) ?? o) >= o);
  const progress = (): ReplayProgress => {
    const done = applied + skipped;
    const total = [...target].reduce((s, [p, o]) => s + Math.max(0, o - (origin.get(p) ?? 0)), 0);
    const seconds = (Date.now() - started) / 1000;
    const rate = seconds > 0 ? done / seconds : 0;
    return { applied, skipped, done, total, commandsPerSecond: rate, etaSeconds: rate > 0 ? Math.max(0, total - done) / rate : null };
  };
  const ticker = opts.onProgress ? setInterval(() => opts.onProgress?.(progress()), opts.progressEveryMs ?? 1000) : null;

  /**
   * Commands [from, to) of the run in one transaction; the checkpoint commits with them. The live
   * projector's parked and skipped commands are passed over: still parked, not claimed here either
   * (an operator may yet retry them); skipped, claimed, as live. A batch first runs as one group
   * (applyGroup: the claims of all its commands in one statement, no savepoint per command, which
   * was two statements and a subtransaction per command, about an eighth of a replay's SQL time);
   * only if a command fails for a reason that does not change (it failed live too) is the batch run
   * again with one savepoint per command, so that command fails alone.
   */
  const applyBatch = async (run: CommandRun, from: number, to: number): Promise<void> => {
    const ids: string[] = [];
    for (let i = from; i < to; i++) {
      const d = run.decoded(i);
      if (d.ok) ids.push(d.command.command_id);
    }
    const passOver = await parkedCommands.notAppliedLive(opts.parkedFrom ?? pool, ids);
    // An undecodable command is reported once, even when its batch runs twice.
    const warnedUndecodable = new Set<number>();
    const attempt = (savepoints: boolean) =>
      withTransaction(pool, async (client) => {
        const counts = { applied: 0, skipped: 0 };
        const group: GroupCommand[] = [];
        for (let i = from; i < to; i++) {
          const at = run.at(i);
          const decoded = run.decoded(i);
          if (!decoded.ok) {
            counts.skipped++;
            if (!warnedUndecodable.has(i)) opts.onWarn?.('undecodable command skipped', { ...at, error: decoded.error });
            warnedUndecodable.add(i);
            continue;
          }
          const live = passOver.get(decoded.command.command_id);
          if (live) {
            // Live never applied it: parked and still open, or skipped by an operator (D26: replay = live).
            if (live === 'skipped') await processedCommands.claim(client, decoded.command, at);
            counts.skipped++;
            continue;
          }
          if (!savepoints) {
            group.push({ c: decoded.command, at });
            continue;
          }
          await client.query('SAVEPOINT command');
          try {
            if ((await applyCommand(client, decoded.command, at, { sideEffects: null })) === 'applied') counts.applied++;
            else counts.skipped++;
            await client.query('RELEASE SAVEPOINT command');
          } catch (err) {
            if (!isDeterministicDbError(err)) throw err;
            // It failed live too (parked there): mark it processed and go on.
            await client.query('ROLLBACK TO SAVEPOINT command');
            await processedCommands.claim(client, decoded.command, at);
            counts.skipped++;
          }
        }
        // Without savepoints the batch is one group: its claims in one statement (applyGroup).
        for (const outcome of await applyGroup(client, group, { sideEffects: null, checkpoint: false, parkBehind: false }))
          counts[outcome === 'applied' ? 'applied' : 'skipped']++;
        const last = run.message(to - 1);
        await projectorCheckpoints.saveReplay(client, topic, last.partition, Number(last.offset) + 1);
        return counts;
      });
    const counts = await attempt(false).catch((err: unknown) => {
      if (!isDeterministicDbError(err)) throw err;
      return attempt(true);
    });
    applied += counts.applied;
    skipped += counts.skipped;
  };
  const consumer: RunningConsumer = await runCommandPipeline(
    opts.kafka,
    opts.schemas,
    {
      groupId: `replay-${started}-${Math.floor(Math.random() * 1e9)}`,
      topics: [topic],
      autoCommit: false,
      // Short polls: the run follows a moving target and its stop should not wait out a long poll.
      maxWaitTimeMs: 250,
      // Where the replay stands, read again if the consumer has to be rebuilt after a crash.
      startAt: () => new Map([...position].map(([p, o]) => [p, String(o)])),
      partitionsConsumedConcurrently: opts.concurrency ?? 3,
    },
    {
      halted,
      // From the replayed position up to the target, never past it.
      window: async (messages) => {
        const partition = messages[0]?.partition ?? -1;
        const from = position.get(partition) ?? 0;
        const upTo = target.get(partition) ?? 0;
        const skip = messages.filter((m) => Number(m.offset) < from).length;
        const take = messages.slice(skip).filter((m) => Number(m.offset) < upTo).length;
        return { skip, take };
      },
      // Up to batchSize commands per transaction; a failure stops the replay (runTo rejects with it).
      apply: async (run, from) => {
        const to = Math.min(run.messages.length, from + batchSize);
        const began = performance.now();
        try {
          await applyBatch(run, from, to);
        } catch (err) {
          failure ??= err;
          wake();
          return 0;
        }
        position.set(run.message(to - 1).partition, Number(run.message(to - 1).offset) + 1);
        wake();
        // Rests in proportion to the batch's time; setBusyPercent(100) or a stop ends the rest.
        const restUntil = performance.now() + (performance.now() - began) * (100 / busyPercent - 1);
        while (busyPercent < 100 && !halted() && performance.now() < restUntil) await pause(Math.min(100, restUntil - performance.now()));
        return to - from;
      },
      // Messages past the target stay unresolved, so the consumer fetches them again; the pause
      // keeps that from spinning while the target waits for the live projector to move.
      batchEnded: async (_partition, _lag, leftOver) => {
        wake();
        if (leftOver > 0) await pause(100);
      },
    },
  );

  const runTo = async (t: Positions): Promise<void> => {
    for (const [p, o] of t) if (o > (target.get(p) ?? 0)) target.set(p, o);
    // A partition waiting on the old target fetches again now, not after its pause: the swap's
    // catch-up runs while live writes wait on its locks.
    nudge();
    while (!reached(t) && !halted()) {
      await new Promise<void>((resolve) => {
        const w = () => {
          waiters.delete(w);
          resolve();
        };
        waiters.add(w);
      });
    }
    if (failure) throw failure;
  };

  return {
    positions: () => new Map(position),
    runTo,
    reached,
    progress,
    setBusyPercent: (percent) => {
      busyPercent = Math.min(100, Math.max(1, percent));
      nudge();
    },
    stop: async () => {
      const complete = reached(target) && failure === null;
      stopped = true;
      wake();
      nudge();
      if (ticker) clearInterval(ticker);
      await consumer.stop();
      const seconds = (Date.now() - started) / 1000;
      return { complete, applied, skipped, seconds, commandsPerSecond: seconds > 0 ? (applied + skipped) / seconds : 0 };
    },
  };
}

/**
 * Replays into a scratch target up to `until` (default: the end of the log when it starts). The
 * scratch rebuild never swaps, so it may run ahead of the live projector.
 */
export async function replayCommandLog(opts: ReplayOptions & { until?: Positions }): Promise<ReplayResult> {
  const until = opts.until ?? (await logEnd(opts.kafka, opts.topic));
  const run = await startReplay(opts);
  try {
    await run.runTo(until);
  } catch (err) {
    await run.stop();
    throw err;
  }
  return run.stop();
}
