import type { Consumer, Kafka } from 'kafkajs';

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
  /** Start each partition of the (single) topic at this offset instead of the group's position. */
  startAt?: Map<number, string>;
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
  consumer: Consumer;
}

/** A consumer group member; offsets are committed only for messages the handler resolved. */
export async function runConsumer(kafka: Kafka, opts: ConsumerOptions): Promise<RunningConsumer> {
  const heartbeatInterval = opts.heartbeatIntervalMs ?? 1000;
  const consumer = kafka.consumer({
    groupId: opts.groupId,
    sessionTimeout: opts.sessionTimeoutMs ?? 10_000,
    heartbeatInterval,
    // A crash of the consumer (a lost broker, a failed rejoin) restarts it, whatever the error:
    // a process that stays up but consumes nothing is the worst of both.
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
  let joined = false;
  consumer.on(consumer.events.GROUP_JOIN, () => (joined = true));
  consumer.on(consumer.events.REBALANCING, () => (joined = false));
  consumer.on(consumer.events.CRASH, () => (joined = false));
  consumer.on(consumer.events.STOP, () => (joined = false));
  consumer.on(consumer.events.DISCONNECT, () => (joined = false));
  await consumer.connect();
  for (const topic of opts.topics) await consumer.subscribe({ topic, fromBeginning: opts.fromBeginning ?? true });
  await consumer.run({
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
  });
  const topic = opts.topics[0];
  if (opts.startAt && topic) for (const [partition, offset] of opts.startAt) consumer.seek({ topic, partition, offset });
  return { consumer, joined: () => joined, stop: () => consumer.disconnect() };
}
