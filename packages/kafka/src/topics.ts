import kafkajs, { type Admin, type Kafka } from 'kafkajs';
import { retry } from '@ingest/runtime';
import { DEFAULT_TOPICS_NAMES } from './topicDefaults.ts';
import type { TopicReplication } from './topicReplication.ts';

// kafkajs is CommonJS: its enums are not named ESM exports under plain node.
const { ConfigResourceTypes, ConfigSource } = kafkajs;

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
  /** Absent: the broker's default, not checked (scratch topics of tests and benches). */
  replicationFactor?: number;
  configs: Record<string, string>;
}

/**
 * The topics as code (docs/operations.md "Topic plan as code"). The commands topic is the
 * source of truth for replays: unlimited retention, never compacted. With a replication, every
 * topic gets that replication factor and min.insync.replicas (the producer writes with
 * acks=all, so a write needs that many copies).
 */
export function topicPlan(names: TopicNames, partitions: number, replication?: TopicReplication): TopicPlan[] {
  const common: Record<string, string> = { 'max.message.bytes': String(MAX_MESSAGE_BYTES) };
  if (replication) common['min.insync.replicas'] = String(replication.minInsyncReplicas);
  const rf = replication ? { replicationFactor: replication.replicationFactor } : {};
  return [
    {
      topic: names.commands,
      numPartitions: partitions,
      ...rf,
      configs: { ...common, 'retention.ms': '-1', 'retention.bytes': '-1', 'cleanup.policy': 'delete' },
    },
    { topic: names.audit, numPartitions: partitions, ...rf, configs: { ...common } },
    { topic: names.stockZero, numPartitions: partitions, ...rf, configs: { ...common } },
    { topic: names.stockRestored, numPartitions: partitions, ...rf, configs: { ...common } },
  ];
}

/**
 * The default replication (3 and 2 with KAFKA_BROKERS) on a cluster with fewer brokers is fitted to
 * it, with a note to log: a single-broker Kafka runs as it is, instead of refusing to start. A
 * replication set by KAFKA_REPLICATION_FACTOR is kept, and creating topics with it fails clearly.
 */
export async function fitReplication(kafka: Kafka, wanted: TopicReplication): Promise<{ replication: TopicReplication; note?: string }> {
  if (wanted.explicit) return { replication: wanted };
  const admin = kafka.admin();
  await admin.connect();
  try {
    const brokers = (await admin.describeCluster()).brokers.length;
    if (brokers >= wanted.replicationFactor) return { replication: wanted };
    const replication = {
      replicationFactor: brokers,
      minInsyncReplicas: Math.min(wanted.minInsyncReplicas, Math.max(1, brokers - 1)),
      explicit: false,
    };
    const note =
      `the cluster has ${brokers} broker(s): new topics get replication ${replication.replicationFactor} and min.insync.replicas ` +
      `${replication.minInsyncReplicas} instead of ${wanted.replicationFactor} and ${wanted.minInsyncReplicas} (set KAFKA_REPLICATION_FACTOR to insist)`;
    return { replication, note };
  } finally {
    await admin.disconnect();
  }
}

/** Creates the missing topics (explicitly: the broker does not auto-create). */
export async function ensureTopics(kafka: Kafka, plan: TopicPlan[]): Promise<string[]> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    const missing = plan.filter((t) => !existing.has(t.topic));
    if (missing.length > 0) await createTopics(admin, missing);
    return missing.map((t) => t.topic);
  } finally {
    await admin.disconnect();
  }
}

async function createTopics(admin: Admin, topics: TopicPlan[]): Promise<void> {
  try {
    // Not kafkajs' waitForLeaders: on a cluster it asks one broker for the new topics' metadata at once,
    // and a broker that has not caught up answers UNKNOWN_TOPIC_OR_PARTITION, which kafkajs does not retry
    // (found on the three-node dev cluster). We wait for the leaders ourselves.
    await admin.createTopics({
      waitForLeaders: false,
      topics: topics.map((t) => ({
        topic: t.topic,
        numPartitions: t.numPartitions,
        replicationFactor: t.replicationFactor ?? -1,
        configEntries: Object.entries(t.configs).map(([name, value]) => ({ name, value })),
      })),
    });
  } catch (err) {
    const detail = JSON.stringify((err as { errors?: unknown }).errors ?? (err as Error).message);
    if (/replication factor|INVALID_REPLICATION_FACTOR|larger than available brokers/i.test(`${(err as Error).message} ${detail}`)) {
      const rf = Math.max(...topics.map((t) => t.replicationFactor ?? 1));
      throw new Error(
        `cannot create topics with replication factor ${rf}: the cluster has fewer brokers. ` +
          'For a single-broker Kafka set KAFKA_REPLICATION_FACTOR=1 KAFKA_MIN_INSYNC_REPLICAS=1.',
        { cause: err },
      );
    }
    throw err;
  }
  await waitForLeaders(
    admin,
    topics.map((t) => t.topic),
  );
}

/** Some partition has no leader yet (its message says which). */
class NoLeaderYet extends Error {}
/** What a broker that has not caught up with the new topics answers. */
const CATCHING_UP = new Set(['UNKNOWN_TOPIC_OR_PARTITION', 'LEADER_NOT_AVAILABLE']);
const typeOf = (err: unknown): string => {
  const type = (err as { type?: unknown } | null)?.type;
  return typeof type === 'string' ? type : '';
};

/** Every partition of the topics has a leader, as metadata from any broker says; asks every 100 ms while brokers catch up. */
async function waitForLeaders(admin: Admin, topics: string[], timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const led = async (): Promise<void> => {
    const md = await admin.fetchTopicMetadata({ topics });
    const leaderless = md.topics.flatMap((t) => t.partitions.filter((p) => p.leader < 0).map((p) => `${t.name}/${p.partitionId}`));
    if (leaderless.length === 0 && md.topics.length === topics.length) return;
    throw new NoLeaderYet(`no leader yet for ${leaderless.join(', ') || 'some topics'}`);
  };
  const catchingUp = (err: unknown): boolean => err instanceof NoLeaderYet || CATCHING_UP.has(typeOf(err));
  await retry(led, {
    classify: (err) => (catchingUp(err) ? 'catching_up' : null),
    backoff: () => (Date.now() > deadline ? null : 100),
  }).catch((err: unknown) => {
    if (!catchingUp(err)) throw err;
    const last = err instanceof NoLeaderYet ? err.message : typeOf(err);
    throw new Error(`topics ${topics.join(', ')} created, but their partitions had no leaders after ${timeoutMs / 1000} s (${last})`);
  });
}

/** A live topic as the plan sees it. */
export interface LiveTopic {
  topic: string;
  partitions: number;
  /** Replica count of each partition. */
  replicas: number[];
  /** Effective value of every config (defaults included), so an inherited value that matches is no drift. */
  configs: Record<string, string | null>;
  /** The topic's own overrides: alterConfigs replaces them as a set, so they are carried along. */
  overrides: Record<string, string | null>;
}

export type TopicDrift =
  | { topic: string; kind: 'missing' }
  | { topic: string; kind: 'partitions'; want: number; have: number }
  | { topic: string; kind: 'replication'; want: number; have: number[] }
  | { topic: string; kind: 'config'; name: string; want: string; have: string | null };

/** Differences between the plan and the live topics (pure). */
export function diffTopics(plan: TopicPlan[], live: Map<string, LiveTopic>): TopicDrift[] {
  const drift: TopicDrift[] = [];
  for (const t of plan) {
    const l = live.get(t.topic);
    if (!l) {
      drift.push({ topic: t.topic, kind: 'missing' });
      continue;
    }
    if (l.partitions !== t.numPartitions) drift.push({ topic: t.topic, kind: 'partitions', want: t.numPartitions, have: l.partitions });
    const rf = t.replicationFactor;
    if (rf !== undefined && l.replicas.some((n) => n !== rf))
      drift.push({ topic: t.topic, kind: 'replication', want: rf, have: l.replicas });
    for (const [name, want] of Object.entries(t.configs)) {
      const have = l.configs[name] ?? null;
      if (have !== want) drift.push({ topic: t.topic, kind: 'config', name, want, have });
    }
  }
  return drift;
}

/** Whether `--apply` can fix it: Kafka never removes partitions, and a new replication factor needs a reassignment. */
export function canApply(d: TopicDrift): boolean {
  if (d.kind === 'partitions') return d.have < d.want;
  return d.kind !== 'replication';
}

export function describeDrift(d: TopicDrift): string {
  switch (d.kind) {
    case 'missing':
      return `${d.topic}: missing`;
    case 'partitions':
      return `${d.topic}: partitions ${d.have}, plan ${d.want}${d.have > d.want ? ' (cannot fix: Kafka cannot remove partitions; recreate the topic or raise KAFKA_PARTITIONS)' : ''}`;
    case 'replication': {
      const have = [...new Set(d.have)].join('/');
      return `${d.topic}: replication factor ${have}, plan ${d.want} (cannot fix here: needs a partition reassignment, kafka-reassign-partitions.sh)`;
    }
    case 'config':
      return `${d.topic}: ${d.name}=${d.have ?? '(unset)'}, plan ${d.want}`;
    default: {
      const _exhaustive: never = d;
      return String(_exhaustive);
    }
  }
}

/** Partitions, replica counts and configs of the plan's topics that exist. */
export async function readLiveTopics(admin: Admin, names: string[]): Promise<Map<string, LiveTopic>> {
  const existing = new Set(await admin.listTopics());
  const present = names.filter((n) => existing.has(n));
  const live = new Map<string, LiveTopic>();
  if (present.length === 0) return live;
  const { topics } = await admin.fetchTopicMetadata({ topics: present });
  const described = await admin.describeConfigs({
    includeSynonyms: false,
    resources: present.map((name) => ({ type: ConfigResourceTypes.TOPIC, name })),
  });
  for (const t of topics) {
    const resource = described.resources.find((r) => r.resourceName === t.name);
    const configs: Record<string, string | null> = {};
    const overrides: Record<string, string | null> = {};
    for (const e of resource?.configEntries ?? []) {
      configs[e.configName] = e.configValue;
      if (e.configSource === ConfigSource.TOPIC_CONFIG) overrides[e.configName] = e.configValue;
    }
    live.set(t.name, {
      topic: t.name,
      partitions: t.partitions.length,
      replicas: t.partitions.map((p) => p.replicas.length),
      configs,
      overrides,
    });
  }
  return live;
}

export async function checkTopics(kafka: Kafka, plan: TopicPlan[]): Promise<TopicDrift[]> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    return diffTopics(
      plan,
      await readLiveTopics(
        admin,
        plan.map((t) => t.topic),
      ),
    );
  } finally {
    await admin.disconnect();
  }
}

export interface ApplyResult {
  /** What was done, one line each. */
  done: string[];
  /** Drift Kafka does not let us fix. */
  cannot: TopicDrift[];
}

/** Creates missing topics, adds partitions, sets configs; reports what it cannot change. */
export async function applyTopicPlan(kafka: Kafka, plan: TopicPlan[]): Promise<ApplyResult> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const live = await readLiveTopics(
      admin,
      plan.map((t) => t.topic),
    );
    const drift = diffTopics(plan, live);
    const done: string[] = [];
    const missing = plan.filter((t) => drift.some((d) => d.topic === t.topic && d.kind === 'missing'));
    if (missing.length) {
      await createTopics(admin, missing);
      done.push(...missing.map((t) => `${t.topic}: created (${t.numPartitions} partitions)`));
    }
    const more = drift.filter((d): d is Extract<TopicDrift, { kind: 'partitions' }> => d.kind === 'partitions' && canApply(d));
    if (more.length) {
      await admin.createPartitions({ topicPartitions: more.map((d) => ({ topic: d.topic, count: d.want })) });
      done.push(...more.map((d) => `${d.topic}: partitions ${d.have} -> ${d.want}`));
    }
    const configDrift = drift.filter((d): d is Extract<TopicDrift, { kind: 'config' }> => d.kind === 'config');
    const byTopic = new Map<string, typeof configDrift>();
    for (const d of configDrift) byTopic.set(d.topic, [...(byTopic.get(d.topic) ?? []), d]);
    if (byTopic.size) {
      // AlterConfigs (kafkajs has no incremental variant) replaces a topic's overrides as a whole:
      // send the ones it has with the plan's on top, so an operator's other overrides stay.
      await admin.alterConfigs({
        validateOnly: false,
        resources: [...byTopic.keys()].map((topic) => {
          const entries: Record<string, string> = {};
          for (const [k, v] of Object.entries(live.get(topic)?.overrides ?? {})) if (v !== null) entries[k] = v;
          for (const d of byTopic.get(topic) ?? []) entries[d.name] = d.want;
          return {
            type: ConfigResourceTypes.TOPIC,
            name: topic,
            configEntries: Object.entries(entries).map(([name, value]) => ({ name, value })),
          };
        }),
      });
      done.push(...configDrift.map((d) => `${d.topic}: ${d.name} ${d.have ?? '(unset)'} -> ${d.want}`));
    }
    return { done, cannot: drift.filter((d) => !canApply(d)) };
  } finally {
    await admin.disconnect();
  }
}
