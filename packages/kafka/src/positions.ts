import { Partitioners, type Kafka, type PartitionMetadata } from 'kafkajs';

/**
 * Where commands sit in the command log, for `GET /api/commands/{id}` (docs/api.md
 * "Position of a pending command"): no request path writes anything for it. The partition of a
 * key is computed with kafkajs's own default partitioner (the producer's, see producer.ts:
 * murmur2 of the key modulo the partition count); the log end offsets are read once per
 * `cacheMs` whatever the number of callers.
 */
export interface LogPositions {
  readonly topic: string;
  /** The partition the producer puts `key` on; null when the partition count cannot be read. */
  partitionOf(key: string): Promise<number | null>;
  /** The partition's end offset (the offset the next command gets); null when unknown. */
  endOffset(partition: number): Promise<number | null>;
  /** The first offset of the partition whose timestamp is at or after `atMs` (the end offset when none); null when unknown. */
  offsetAt(partition: number, atMs: number): Promise<number | null>;
  stop(): Promise<void>;
}

/** kafkajs's default partitioner, as the producer runs it (a keyed message never depends on leaders). */
export function partitionForKey(key: string, partitions: number): number {
  const metadata = Array.from({ length: partitions }, (_, i) => ({ partitionId: i, leader: 0 }) as PartitionMetadata);
  return Partitioners.DefaultPartitioner()({ topic: '', partitionMetadata: metadata, message: { key, value: null } });
}

const withTimeout = <T>(p: Promise<T>, ms: number): Promise<T | null> =>
  Promise.race([p.catch(() => null), new Promise<null>((resolve) => setTimeout(() => resolve(null), ms).unref())]);

export async function startLogPositions(
  kafka: Kafka,
  opts: { topic: string; cacheMs?: number; timeoutMs?: number; onError?: (err: unknown) => void },
): Promise<LogPositions> {
  const admin = kafka.admin();
  await admin.connect();
  const cacheMs = opts.cacheMs ?? 1000;
  const timeoutMs = opts.timeoutMs ?? 1000;
  let ends: { at: number; value: Promise<Map<number, number> | null> } | null = null;
  const readEnds = (): Promise<Map<number, number> | null> => {
    const now = Date.now();
    if (ends && now - ends.at < cacheMs) return ends.value;
    const value = withTimeout(
      admin.fetchTopicOffsets(opts.topic).then(
        (offsets) => new Map(offsets.map((o) => [o.partition, Number(o.high)])),
        (err: unknown) => {
          opts.onError?.(err);
          return null;
        },
      ),
      timeoutMs,
    );
    ends = { at: now, value };
    return value;
  };
  // The offset of a time never changes once a command at or after it is in the log: kept (bounded).
  const byTime = new Map<string, number>();
  return {
    topic: opts.topic,
    partitionOf: async (key) => {
      const m = await readEnds();
      return m && m.size > 0 ? partitionForKey(key, m.size) : null;
    },
    endOffset: async (partition) => (await readEnds())?.get(partition) ?? null,
    offsetAt: async (partition, atMs) => {
      const key = `${partition}:${atMs}`;
      const known = byTime.get(key);
      if (known !== undefined) return known;
      const found = await withTimeout(
        admin.fetchTopicOffsetsByTimestamp(opts.topic, atMs).then(
          (offsets) => offsets.find((o) => o.partition === partition)?.offset,
          (err: unknown) => {
            opts.onError?.(err);
            return undefined;
          },
        ),
        timeoutMs,
      );
      if (found === null || found === undefined) return null;
      const offset = Number(found);
      const end = (await readEnds())?.get(partition);
      if (end !== undefined && offset < end) {
        if (byTime.size >= 10_000) byTime.clear();
        byTime.set(key, offset);
      }
      return offset;
    },
    stop: () => admin.disconnect(),
  };
}
