import type { SchemaRegistry } from '@ingest/contracts';
import { classifyDbError, parkedCommands, projectorCheckpoints, withTransaction, type Pool } from '@ingest/db';
import { withIncomingCommand, type BatchContext, type IncomingMessage, type Kafka, type TopicNames } from '@ingest/kafka';
import { applyCommand, runCommandPipeline, type ApplyOutcome, type CommandRun } from '@ingest/projection';
import { failpoint, retry, type Logger, type Registry, type RetrySignal } from '@ingest/runtime';
import { groupCommit } from './groupCommit.ts';
import { projectorMetrics } from './metrics.ts';

export interface ProjectorDeps {
  pool: Pool;
  kafka: Kafka;
  schemas: SchemaRegistry;
  topics: TopicNames;
  groupId: string;
  log: Logger;
  registry: Registry;
  /**
   * Independent members of the consumer group this projector runs (PROJECTOR_CONCURRENCY, default 3):
   * how many partitions it applies at the same time.
   */
  members?: number;
  sessionTimeoutMs?: number;
  heartbeatIntervalMs?: number;
  /** How long a fetch waits for new commands (kafkajs default 5 s); stopping waits for it too. */
  fetchWaitMs?: number;
  /** Tries of a command that fails for a reason retrying will not fix, before it is parked (default 3). */
  maxAttempts?: number;
  /** First backoff between tries (doubles; transient errors are retried without bound, up to 5 s apart). */
  retryBackoffMs?: number;
  /**
   * Group commit: consecutive commands of one partition applied in one transaction, at
   * most this many (default 64; 1 turns it off) and this many message bytes (default 8 MiB).
   */
  groupMaxCommands?: number;
  groupMaxBytes?: number;
}

export interface Projector {
  /** Joined its group and consuming (readiness). */
  joined(): boolean;
  stop(): Promise<void>;
}

/** The consumer stopped or lost its partition while a command was being retried: do not resolve it. */
class Aborted extends Error {}

/** Retries end with Aborted once the batch's consumer stops or loses its partition (read after each failure and wait). */
const whileRunning = (ctx: BatchContext): RetrySignal => ({
  get aborted() {
    return !ctx.isRunning();
  },
  reason: new Aborted(),
});

const errorText = (err: unknown): string => {
  const e = err as { code?: unknown; message?: unknown };
  const message = typeof e?.message === 'string' ? e.message : String(err);
  return typeof e?.code === 'string' ? `${e.code}: ${message}` : message;
};

/**
 * The projector shell (STYLE.md): per command one transaction with claim (D4), position, load ->
 * decide -> apply, stored result (D6) and outbox rows (D5); the Kafka offset is committed after
 * the commit. Faults (docs/operations.md "Faults and outages"): a transient failure (connection
 * lost, database down, deadlock) is retried with backoff for as long as it lasts, never parked;
 * any other failure is retried a bounded number of times and then the command is parked, and its
 * shop's later commands park behind it, while the other shops of the partition keep flowing.
 */
export async function startProjector(deps: ProjectorDeps): Promise<Projector> {
  const { pool, log } = deps;
  const maxAttempts = deps.maxAttempts ?? 3;
  const baseBackoff = deps.retryBackoffMs ?? 100;
  const { applied, retries, retrying, groupSize, duration, transaction, lagOffsets, lag, consumerRebuilds } = projectorMetrics(
    deps.registry,
  );

  /**
   * Runs `fn` until it succeeds: transient failures are retried with backoff (doubling, at most 5 s
   * apart) while the consumer runs; other failures are retried until `permanentTries` (4 times
   * longer each time, then thrown). Heartbeats go on meanwhile.
   */
  const withRetries = async <T>(ctx: BatchContext, what: object, permanentTries: number, fn: () => Promise<T>): Promise<T> => {
    let counted = false; // in projector_commands_retrying from its first failure until it ends
    const tried = async (): Promise<T> => {
      try {
        return await fn();
      } catch (err) {
        if (!counted) retrying.inc();
        counted = true;
        throw err;
      }
    };
    try {
      return await retry(tried, {
        classify: (err) => (classifyDbError(err) === 'permanent' ? 'permanent' : 'transient'),
        backoff: (n, cls) => {
          if (cls === 'transient') return Math.min(5000, baseBackoff * 2 ** Math.min(n, 6));
          return n < permanentTries ? baseBackoff * 4 ** (n - 1) : null;
        },
        signal: whileRunning(ctx),
        onRetry: ({ err, cls, attempt, delayMs }) => {
          retries.inc({ class: cls });
          if (delayMs === null) return;
          if (cls === 'permanent') log.warn({ err, ...what, attempt }, 'command failed; trying again');
          else if (attempt % 10 === 1) log.warn({ err, ...what, attempt }, 'database unavailable; retrying');
        },
      });
    } finally {
      if (counted) retrying.dec();
    }
  };

  // The applied position of a batch's partition, read once per batch (the partition may have been
  // another member's since): anything below it is passed without a transaction (a group reset to
  // earliest re-reads at Kafka's speed).
  const positionOf = async (ctx: BatchContext, m: IncomingMessage): Promise<number> => {
    const stored = await withRetries(ctx, { partition: m.partition }, 1, () => projectorCheckpoints.load(pool, m.topic, m.partition));
    let next = stored.next;
    // A position is only good for the log it was taken on. A log that ends before it, or holds
    // another command just before it, is another log (a recreated topic, a replaced broker, the
    // same database behind a new dev broker): skipping by it would lose commands. Then the position
    // is forgotten and the per-command markers keep exactly-once.
    const before = ctx.batchMessages().find((x) => Number(x.offset) === next - 1);
    const otherLog =
      next > ctx.highWatermark() ||
      (before !== undefined && stored.lastCommandId !== null && before.headers['command_id'] !== stored.lastCommandId);
    if (next > 0 && otherLog) {
      log.error(
        {
          partition: m.partition,
          position: next,
          logEnd: ctx.highWatermark(),
          expected: stored.lastCommandId,
          found: before?.headers['command_id'],
        },
        'the command log does not match the stored position (another log?): position forgotten, markers keep exactly-once',
      );
      await withRetries(ctx, { partition: m.partition }, 1, () => projectorCheckpoints.reset(pool, m.topic, m.partition));
      next = 0;
    }
    return next;
  };

  const park = async (ctx: BatchContext, p: parkedCommands.ParkedCommand): Promise<void> => {
    await withRetries(ctx, { command_id: p.command_id }, 1, () =>
      withTransaction(pool, async (tx) => {
        await projectorCheckpoints.advance(tx, p.at, p.command_id);
        await parkedCommands.park(tx, p);
      }),
    );
    log.error({ command_id: p.command_id, shop: p.shop, kind: p.kind, error: p.error, ...p.at }, 'command parked');
  };

  // Each command's work continues its request: the request id from the record headers on
  // its log lines and, tracing on, an `apply <kind>` span child of the gateway's producer span.
  const handle = (run: CommandRun, i: number, ctx: BatchContext): Promise<void> => {
    const m = run.message(i);
    return withIncomingCommand(
      m,
      `apply ${m.headers['kind'] ?? 'command'}`,
      { attributes: { 'ingest.command_id': m.headers['command_id'] ?? '' } },
      () => handleOne(run, i, ctx),
    );
  };

  const handleOne = async (run: CommandRun, i: number, ctx: BatchContext): Promise<void> => {
    const m = run.message(i);
    const at = run.at(i);
    const decoded = run.decoded(i);
    if (!decoded.ok) {
      if (decoded.commandId && decoded.shop) {
        // Its shop is known: park it, and the shop's later commands wait behind it (D2).
        await park(ctx, {
          command_id: decoded.commandId,
          shop: decoded.shop,
          kind: 'unknown',
          at,
          message: m.value ?? Buffer.alloc(0),
          error: decoded.error,
          attempts: 1,
          behind: null,
        });
        applied.inc({ kind: 'unknown', outcome: 'parked' });
      } else {
        // Nothing to answer and no shop to hold back: logged, counted and passed.
        log.error({ ...at, error: decoded.error }, 'undecodable command without a shop skipped');
        await withRetries(ctx, at, 1, () => withTransaction(pool, (tx) => projectorCheckpoints.advance(tx, at, null)));
        applied.inc({ kind: 'unknown', outcome: 'rejected' });
      }
      return;
    }
    const c = decoded.command;
    const started = performance.now();
    let outcome: ApplyOutcome;
    try {
      outcome = await withRetries(ctx, { command_id: c.command_id, shop: c.shop }, maxAttempts, async () => {
        await failpoint('projector.before-apply');
        return withTransaction(pool, (tx) =>
          applyCommand(tx, c, at, {
            sideEffects: { topics: deps.topics, recordHeaders: m.headers },
            checkpoint: true,
            parkBehind: { message: m.value ?? Buffer.alloc(0) },
          }),
        );
      });
    } catch (err) {
      if (err instanceof Aborted) throw err;
      await park(ctx, {
        command_id: c.command_id,
        shop: c.shop,
        kind: c.kind,
        at,
        message: m.value ?? Buffer.alloc(0),
        error: errorText(err),
        attempts: maxAttempts,
        behind: null,
      });
      outcome = 'parked';
    }
    applied.inc({ kind: c.kind, outcome });
    if (outcome === 'duplicate') log.info({ command_id: c.command_id, ...at }, 'duplicate command skipped (D4)');
    else log.debug({ command_id: c.command_id, kind: c.kind, outcome, ...at }, 'command projected');
    const seconds = (performance.now() - started) / 1000;
    duration.observe({ kind: c.kind }, seconds);
    transaction.observe(seconds);
    lag.applied(m.partition, Date.parse(c.received_at));
    await failpoint('projector.after-commit-before-ack');
  };

  const applyGroup = groupCommit({
    pool,
    topics: deps.topics,
    log,
    metrics: { applied, groupSize, duration, transaction, lag },
    maxCommands: deps.groupMaxCommands ?? 64,
    maxBytes: deps.groupMaxBytes ?? 8 * 1024 * 1024,
  });

  // PROJECTOR_CONCURRENCY independent members of the group, each applying its partitions one batch
  // at a time. Not one member with kafkajs' partitionsConsumedConcurrently: a member fetches all its
  // partitions together and fetches again only once every batch of the fetch is applied, so one
  // busy partition held every other partition's next batch (a quiet shop's command waited for a
  // noisy shop's group transaction; bench B6 with 4 shops, B7).
  const members = Math.max(1, deps.members ?? 3);
  const startMember = () =>
    runCommandPipeline(
      deps.kafka,
      deps.schemas,
      {
        groupId: deps.groupId,
        topics: [deps.topics.commands],
        fromBeginning: true,
        partitionsConsumedConcurrently: 1,
        log: deps.log,
        onRebuild: () => consumerRebuilds.inc(),
        ...(deps.sessionTimeoutMs === undefined ? {} : { sessionTimeoutMs: deps.sessionTimeoutMs }),
        ...(deps.heartbeatIntervalMs === undefined ? {} : { heartbeatIntervalMs: deps.heartbeatIntervalMs }),
        ...(deps.fetchWaitMs === undefined ? {} : { maxWaitTimeMs: deps.fetchWaitMs }),
      },
      {
        batchStarted: (partition) => lag.batchStarted(partition),
        // Below the stored position: applied already, passed without a transaction.
        window: async (messages, ctx) => {
          let position: number;
          try {
            position = await positionOf(ctx, messages[0] as IncomingMessage);
          } catch (err) {
            if (err instanceof Aborted) return null;
            throw err;
          }
          const skip = messages.filter((m) => Number(m.offset) < position).length;
          for (let k = 0; k < skip; k++) applied.inc({ kind: 'unknown', outcome: 'skipped' });
          return { skip, take: messages.length - skip };
        },
        // A group of commands in one transaction, else the next command alone with its retries and parking.
        apply: async (run, from, ctx) => {
          try {
            const grouped = await applyGroup(run, from);
            if (grouped > 0) return grouped;
            await handle(run, from, ctx);
            return 1;
          } catch (err) {
            if (err instanceof Aborted) return 0;
            throw err;
          }
        },
        batchEnded: (partition, left) => {
          if (left !== null) lagOffsets.set({ partition: String(partition) }, left);
          lag.batchEnded(partition, left);
        },
      },
    );
  const started = await Promise.allSettled(Array.from({ length: members }, () => startMember()));
  const consumers = started.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  const failed = started.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) {
    // No member left behind when one could not start (Kafka unreachable): the caller retries or exits.
    await Promise.all(consumers.map((c) => c.stop().catch(() => {})));
    throw failed.reason;
  }
  log.info({ groupId: deps.groupId, topic: deps.topics.commands, members }, 'projector consuming');
  return {
    joined: () => consumers.every((c) => c.joined()),
    stop: () =>
      Promise.all(consumers.map((c) => c.stop()))
        .then(() => {})
        .finally(() => lag.clear()),
  };
}
