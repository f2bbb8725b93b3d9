import type { Kafka } from 'kafkajs';

export interface LagMonitor {
  /** Commands appended but not yet committed by the group, summed over partitions; null until known. */
  lag(): number | null;
  /** The broker answered one of the last three polls. */
  healthy(): boolean;
  stop(): Promise<void>;
}

/**
 * Polls a consumer group's committed offsets against the topic's end offsets. The gateway uses it
 * to refuse with 429 before the backlog grows without bound (D13).
 */
export async function startLagMonitor(
  kafka: Kafka,
  opts: { groupId: string; topic: string; intervalMs?: number; onError?: (err: unknown) => void },
): Promise<LagMonitor> {
  const admin = kafka.admin();
  await admin.connect();
  let current: number | null = null;
  let lastOk = 0;
  const interval = opts.intervalMs ?? 2000;
  let stopped = false;
  const poll = async (): Promise<void> => {
    try {
      const [ends, committed] = await Promise.all([
        admin.fetchTopicOffsets(opts.topic),
        admin.fetchOffsets({ groupId: opts.groupId, topics: [opts.topic] }),
      ]);
      const done = new Map((committed[0]?.partitions ?? []).map((p) => [p.partition, Number(p.offset)]));
      current = ends.reduce((sum, e) => {
        const c = done.get(e.partition) ?? -1;
        // No commit yet: everything from the log start is pending.
        const from = c < 0 ? Number(e.low) : c;
        return sum + Math.max(0, Number(e.high) - from);
      }, 0);
      lastOk = Date.now();
    } catch (err) {
      opts.onError?.(err);
    }
  };
  await poll();
  const timer = setInterval(() => void (stopped ? undefined : poll()), interval);
  timer.unref();
  return {
    lag: () => current,
    healthy: () => Date.now() - lastOk < 3 * interval + 1000,
    stop: async () => {
      stopped = true;
      clearInterval(timer);
      await admin.disconnect();
    },
  };
}
