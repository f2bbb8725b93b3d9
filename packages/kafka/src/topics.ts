import { DEFAULT_TOPICS_NAMES } from '@ingest/runtime';
import type { Kafka } from 'kafkajs';

export interface TopicNames {
  commands: string;
  audit: string;
  stockZero: string;
  stockRestored: string;
}

export const DEFAULT_TOPICS: TopicNames = { ...DEFAULT_TOPICS_NAMES };

/** Commands of 10,000 lines are several MB even compressed; the command log keeps up to 64 MiB. */
export const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

export interface TopicPlan {
  topic: string;
  numPartitions: number;
  configs: Record<string, string>;
}

/** The commands topic is the source of truth for replays: unlimited retention, never compacted. */
export function topicPlan(names: TopicNames, partitions: number): TopicPlan[] {
  const big = { 'max.message.bytes': String(MAX_MESSAGE_BYTES) };
  return [
    { topic: names.commands, numPartitions: partitions, configs: { ...big, 'retention.ms': '-1', 'retention.bytes': '-1', 'cleanup.policy': 'delete' } },
    { topic: names.audit, numPartitions: partitions, configs: big },
    { topic: names.stockZero, numPartitions: partitions, configs: big },
    { topic: names.stockRestored, numPartitions: partitions, configs: big },
  ];
}

/** Creates the missing topics (explicitly: the broker does not auto-create). */
export async function ensureTopics(kafka: Kafka, plan: TopicPlan[]): Promise<string[]> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    const missing = plan.filter((t) => !existing.has(t.topic));
    if (missing.length === 0) return [];
    await admin.createTopics({
      waitForLeaders: true,
      topics: missing.map((t) => ({
        topic: t.topic,
        numPartitions: t.numPartitions,
        replicationFactor: -1,
        configEntries: Object.entries(t.configs).map(([name, value]) => ({ name, value })),
      })),
    });
    return missing.map((t) => t.topic);
  } finally {
    await admin.disconnect();
  }
}
