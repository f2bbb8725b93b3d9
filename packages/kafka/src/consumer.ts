import type { Consumer, ConsumerRunConfig, Kafka } from 'kafkajs';
import type { KafkaLog } from './client.ts';

export interface IncomingMessage {
  topic: string;
  partition: number;
  offset: string;
  key: string | null;
  value: Buffer | null;
  headers: Record<string, string>;
}

export interface BatchContext {
  /** Marks the message done; its offset is committed after this call (commit follows the DB commit). */
  resolveOffset(offset: string): void;
  heartbeat(): Promise<void>;
  isRunning(): boolean;
  /** Offset lag of this partition after the batch (high watermark - 1 - last offset). */
  lag(): number;
  /** The messages of this batch (the partition's, in offset order). */
  batchMessages(): IncomingMessage[];
  /** The partition's end (next offset to be written) when the batch was fetched. */
  highWatermark(): number;
}

export interface ConsumerOptions {
  groupId: string;
  topics: string[];
  fromBeginning?: boolean;
  partitionsConsumedConcurrently?: number;
  /** Commit offsets to the group (default true). A replay keeps its position in its own database. */
  autoCommit?: boolean;
  /** How long a fetch waits for new messages (kafkajs default 5 s); stopping waits for it too. */
  maxWaitTimeMs?: number;
  /**
   * Start each partition of the (single) topic at this offset instead of the group's position; read
   * again when a crashed member is rebuilt, so it can follow the caller's progress.
   */
  startAt?: () => Map<number, string>;
  /** Where a rebuild after a crash is reported (kafkajs logs the crash itself). */
  log?: KafkaLog;
  /** Called as each rebuilt member starts (a metric). */
  onRebuild?: () => void;
  /**
   * Group session timeout (default 10 s): how long the group waits for a silent member before
   * handing its partitions to the others, i.e. how long a killed process stalls its partitions.
   */
  sessionTimeoutMs?: number;
  /** Heartbeat interval (default 1 s); heartbeats also go out while a long command is being applied. */
  heartbeatIntervalMs?: number;
  eachBatch(messages: IncomingMessage[], ctx: BatchContext): Promise<void>;
}

export interface RunningConsumer {
  stop(): Promise<void>;
  /** True while the member has joined its group and holds its assignment (readiness). */
  joined(): boolean;
  /** How many times the member was rebuilt after a crash kafkajs does not restart from. */
  restarts(): number;
}

/** How long to wait before the Nth rebuild of a crashed member (1 s, doubling, at most 30 s). */
export function restartDelayMs(attempt: number): number {
  return Math.min(30_000, 1000 * 2 ** Math.max(0, attempt - 1));
}

/**
 * A consumer group member; offsets are committed only for messages the handler resolved.
 *
 * It stays a member for the life of the process. kafkajs restarts its consumer after a retriable
 * crash only: a TypeError or RangeError anywhere in its fetch loop (its own races during a
 * rebalance, kafkajs#558; a bug in a handler) or a non-retriable protocol error leaves a consumer
 * that is disconnected for good in a process that looks alive. Then a new consumer joins the group
 * in its place after a backoff, from the committed offsets (or from `startAt` as it reads then),
 * so at worst the work since the last commit is done again: the projection is idempotent (D5).
 */
export async function runConsumer(kafka: Kafka, opts: ConsumerOptions): Promise<RunningConsumer> {
  let joined = false;
  let stopping = false;
  let restarts = 0;
  let attempt = 0;
  let timer: NodeJS.Timeout | undefined;
  let member: Consumer | undefined;
  let starting: Promise<void> | undefined;

  const rebuild = (error: unknown): void => {
    if (stopping) return;
    attempt += 1;
    const delayMs = restartDelayMs(attempt);
    opts.log?.error(
      { err: error instanceof Error ? error.message : String(error), cause: rootStack(error), attempt, delayMs, groupId: opts.groupId },
      'kafka consumer stopped on an error kafkajs does not restart from; a new member joins after the delay',
    );
    timer = setTimeout(() => {
      timer = undefined;
      if (stopping) return;
      restarts += 1;
      opts.onRebuild?.();
      starting = startMember().catch(rebuild);
    }, delayMs);
  };

  const startMember = async (): Promise<void> => {
    const consumer = createMember(kafka, opts);
    member = consumer;
    consumer.on(consumer.events.GROUP_JOIN, () => {
      joined = true;
      attempt = 0;
    });
    consumer.on(consumer.events.REBALANCING, () => (joined = false));
    consumer.on(consumer.events.STOP, () => (joined = false));
    consumer.on(consumer.events.DISCONNECT, () => (joined = false));
    consumer.on(consumer.events.CRASH, ({ payload }) => {
      joined = false;
      // kafkajs has already disconnected this consumer; when it restarts it itself, leave it be.
      if (!payload.restart && member === consumer) rebuild(payload.error);
    });
    try {
      await consumer.connect();
      for (const topic of opts.topics) await consumer.subscribe({ topic, fromBeginning: opts.fromBeginning ?? true });
      await consumer.run(runConfig(opts));
    } catch (err) {
      await consumer.disconnect().catch(() => {});
      throw err;
    }
    const topic = opts.topics[0];
    const startAt = opts.startAt?.();
    if (startAt && topic) for (const [partition, offset] of startAt) consumer.seek({ topic, partition, offset });
  };

  await startMember();
  return {
    joined: () => joined,
    restarts: () => restarts,
    stop: async () => {
      stopping = true;
      clearTimeout(timer);
      await starting?.catch(() => {});
      await member?.disconnect();
    },
  };
}

// kafkajs wraps the error that stopped it (KafkaJSNonRetriableError) and logs only the wrapper's
// stack: the original's says where it happened.
function rootStack(error: unknown): string | undefined {
  let e: unknown = error;
  while (e instanceof Error && e.cause instanceof Error) e = e.cause;
  return e instanceof Error ? e.stack : undefined;
}

function createMember(kafka: Kafka, opts: ConsumerOptions): Consumer {
  return kafka.consumer({
    groupId: opts.groupId,
    sessionTimeout: opts.sessionTimeoutMs ?? 10_000,
    heartbeatInterval: opts.heartbeatIntervalMs ?? 1000,
    // kafkajs restarts the consumer itself after a retriable crash (a lost broker, a failed
    // rejoin); runConsumer rebuilds it after any other.
    retry: { initialRetryTime: 300, retries: 10, maxRetryTime: 5000, restartOnFailure: async () => true },
    // What one fetch may bring: it is decompressed and decoded whole, so it bounds the consumer's
    // memory while it catches up (a replay, a projector back from an outage). 128 MB fetches of
    // gzipped commands held the replay at 650 MB RSS (bench B9). A command larger than the limit
    // still comes whole: since KIP-74 the broker returns the first record batch even if it is
    // larger (the limits are soft).
    maxBytesPerPartition: 1024 * 1024,
    maxBytes: 10 * 1024 * 1024,
    allowAutoTopicCreation: false,
    ...(opts.maxWaitTimeMs === undefined ? {} : { maxWaitTimeInMs: opts.maxWaitTimeMs }),
  });
}

function runConfig(opts: ConsumerOptions): ConsumerRunConfig {
  const heartbeatInterval = opts.heartbeatIntervalMs ?? 1000;
  return {
    autoCommit: opts.autoCommit ?? true,
    eachBatchAutoResolve: false,
    partitionsConsumedConcurrently: opts.partitionsConsumedConcurrently ?? 1,
    eachBatch: async ({ batch, resolveOffset, heartbeat, isRunning, isStale, commitOffsetsIfNecessary }) => {
      const messages: IncomingMessage[] = batch.messages.map((m) => ({
        topic: batch.topic,
        partition: batch.partition,
        offset: m.offset,
        key: m.key ? m.key.toString() : null,
        value: m.value,
        headers: Object.fromEntries(
          Object.entries(m.headers ?? {}).map(([k, v]) => [k, Array.isArray(v) ? String(v[0]) : String(v ?? '')]),
        ),
      }));
      // kafkajs heartbeats only when asked: keep asking while a long command (or a retry during an
      // outage) runs, so the group does not take the partition away from a member that is working.
      let lostGroup = false;
      const keepAlive = setInterval(() => {
        heartbeat().catch(() => {
          lostGroup = true; // a rebalance: the handler stops at the next message and kafkajs rejoins
        });
      }, heartbeatInterval);
      try {
        await opts.eachBatch(messages, {
          resolveOffset: (offset) => {
            resolveOffset(offset);
          },
          heartbeat,
          isRunning: () => isRunning() && !isStale() && !lostGroup,
          lag: () => Number(batch.offsetLag()),
          highWatermark: () => Number(batch.highWatermark),
          batchMessages: () => messages,
        });
      } finally {
        clearInterval(keepAlive);
      }
      if (opts.autoCommit ?? true) await commitOffsetsIfNecessary();
    },
  };
}
