import { describe, expect, it } from 'vitest';
import { canApply, describeDrift, diffTopics, topicPlan, type LiveTopic, type TopicPlan } from './topics.ts';

const names = { commands: 'c', audit: 'a', stockZero: 'z', stockRestored: 'r' };
const production = { replicationFactor: 3, minInsyncReplicas: 2 };

/** A live topic exactly as planned. */
function asPlanned(t: TopicPlan): LiveTopic {
  return {
    topic: t.topic,
    partitions: t.numPartitions,
    replicas: Array.from({ length: t.numPartitions }, () => t.replicationFactor ?? 1),
    configs: { ...t.configs, 'segment.bytes': '1073741824' },
    overrides: { ...t.configs },
  };
}
const liveOf = (topics: LiveTopic[]) => new Map(topics.map((t) => [t.topic, t]));

describe('topic plan', () => {
  it('keeps every command (retention.ms=-1) and gives every topic the replication and min ISR of the settings', () => {
    const plan = topicPlan(names, 6, production);
    expect(plan.map((t) => [t.topic, t.numPartitions, t.replicationFactor, t.configs['min.insync.replicas']])).toEqual([
      ['c', 6, 3, '2'],
      ['a', 6, 3, '2'],
      ['z', 6, 3, '2'],
      ['r', 6, 3, '2'],
    ]);
    expect(plan[0]!.configs).toMatchObject({ 'retention.ms': '-1', 'retention.bytes': '-1', 'cleanup.policy': 'delete' });
  });

  it('without a replication leaves it to the broker and does not check it (scratch topics)', () => {
    const plan = topicPlan(names, 3);
    expect(plan[0]!.replicationFactor).toBeUndefined();
    expect(plan[0]!.configs['min.insync.replicas']).toBeUndefined();
    const live = asPlanned(plan[0]!);
    expect(diffTopics([plan[0]!], liveOf([{ ...live, replicas: [2, 2, 2] }]))).toEqual([]);
  });
});

describe('drift between the plan and the live topics', () => {
  const plan = topicPlan(names, 6, production);

  it('finds none when the topics are as planned, inherited values included', () => {
    const live = plan.map(asPlanned);
    live[1] = { ...live[1]!, overrides: {} }; // min.insync.replicas inherited from the broker, same value
    expect(diffTopics(plan, liveOf(live))).toEqual([]);
  });

  it('reports a missing topic, a config changed by hand, partitions and replication', () => {
    const [c, a, z] = plan.map(asPlanned);
    const live = liveOf([
      { ...c!, configs: { ...c!.configs, 'retention.ms': '604800000' } },
      { ...a!, partitions: 3, replicas: [3, 3, 3] },
      { ...z!, partitions: 8, replicas: [1, 1, 1, 1, 1, 1, 1, 1] },
    ]);
    const drift = diffTopics(plan, live);
    expect(drift).toEqual([
      { topic: 'c', kind: 'config', name: 'retention.ms', want: '-1', have: '604800000' },
      { topic: 'a', kind: 'partitions', want: 6, have: 3 },
      { topic: 'z', kind: 'partitions', want: 6, have: 8 },
      { topic: 'z', kind: 'replication', want: 3, have: [1, 1, 1, 1, 1, 1, 1, 1] },
      { topic: 'r', kind: 'missing' },
    ]);
    expect(drift.map(canApply)).toEqual([true, true, false, false, true]);
    expect(drift.map(describeDrift)).toEqual([
      'c: retention.ms=604800000, plan -1',
      'a: partitions 3, plan 6',
      'z: partitions 8, plan 6 (cannot fix: Kafka cannot remove partitions; recreate the topic or raise KAFKA_PARTITIONS)',
      'z: replication factor 1, plan 3 (cannot fix here: needs a partition reassignment, kafka-reassign-partitions.sh)',
      'r: missing',
    ]);
  });

  it('reports a config the topic does not have at all', () => {
    const c = asPlanned(plan[0]!);
    const { 'min.insync.replicas': _gone, ...rest } = c.configs;
    expect(diffTopics([plan[0]!], liveOf([{ ...c, configs: rest }]))).toEqual([
      { topic: 'c', kind: 'config', name: 'min.insync.replicas', want: '2', have: null },
    ]);
  });
});
