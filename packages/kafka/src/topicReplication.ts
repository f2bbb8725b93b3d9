import { ConfigError, setting, settingGiven } from '@ingest/runtime';

export interface TopicReplication {
  replicationFactor: number;
  minInsyncReplicas: number;
  /** Set by KAFKA_REPLICATION_FACTOR: kept as it is. A default is fitted to a smaller cluster (fitReplication). */
  explicit?: boolean;
}

/** A production cluster: a write (acks=all) survives one broker down, and a second loss stops writes rather than data. */
export const PRODUCTION_REPLICATION: TopicReplication = { replicationFactor: 3, minInsyncReplicas: 2 };
/** The dev stack's single broker. */
export const SINGLE_BROKER_REPLICATION: TopicReplication = { replicationFactor: 1, minInsyncReplicas: 1 };

/**
 * KAFKA_REPLICATION_FACTOR / KAFKA_MIN_INSYNC_REPLICAS. Their defaults tell the stacks apart: with
 * KAFKA_BROKERS set (someone's cluster) or the dev stack's own cluster (KAFKA_CLUSTER_SIZE > 1) 3 and 2
 * (fitted down to a smaller cluster); the dev stack's single broker 1 and 1.
 */
export function readTopicReplication(env: NodeJS.ProcessEnv): TopicReplication {
  const cluster = settingGiven(env, 'KAFKA_BROKERS') || setting(env, 'KAFKA_CLUSTER_SIZE') > 1;
  const defaults = cluster ? PRODUCTION_REPLICATION : SINGLE_BROKER_REPLICATION;
  const replicationFactor = setting(env, 'KAFKA_REPLICATION_FACTOR') ?? defaults.replicationFactor;
  const minInsyncReplicas = setting(env, 'KAFKA_MIN_INSYNC_REPLICAS') ?? Math.min(defaults.minInsyncReplicas, replicationFactor);
  if (minInsyncReplicas > replicationFactor) {
    throw new ConfigError(
      `KAFKA_MIN_INSYNC_REPLICAS (${minInsyncReplicas}) is above KAFKA_REPLICATION_FACTOR (${replicationFactor}): every acks=all write would fail`,
    );
  }
  return { replicationFactor, minInsyncReplicas, explicit: settingGiven(env, 'KAFKA_REPLICATION_FACTOR') };
}
