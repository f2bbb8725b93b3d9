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
  eachBatch(messages: IncomingMessage[], ctx: BatchContext): Promise<void>;
}

export interface RunningConsumer {
  stop(): Promise<void>;
  consumer: Consumer;
}

/** A consumer group member; offsets are committed only for messages the handler resolved. */
export async function runConsumer(kafka: Kafka, opts: ConsumerOptions): Promise<RunningConsumer> {
  const consumer = kafka.consumer({
    groupId: opts.groupId,
    sessionTimeout: 30000,
    heartbeatInterval: 3000,
    maxBytesPerPartition: 64 * 1024 * 1024,
    maxBytes: 128 * 1024 * 1024,
    allowAutoTopicCreation: false,
    ...(opts.maxWaitTimeMs === undefined ? {} : { maxWaitTimeInMs: opts.maxWaitTimeMs }),
  });
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
      await opts.eachBatch(messages, {
        resolveOffset: (offset) => {
          resolveOffset(offset);
        },
        heartbeat,
        isRunning: () => isRunning() && !isStale(),
        lag: () => Number(batch.offsetLag()),
      });
      if (opts.autoCommit ?? true) await commitOffsetsIfNecessary();
    },
  });
  const topic = opts.topics[0];
  if (opts.startAt && topic) for (const [partition, offset] of opts.startAt) consumer.seek({ topic, partition, offset });
  return { consumer, stop: () => consumer.disconnect() };
}
