export { createKafka, kafkajsSecurity, type Kafka, type KafkaClientOptions, type KafkaLog } from './client.ts';
export { classifyKafkaError, KafkaPortError, type KafkaFailure } from './errors.ts';
export { createMessageSink, type MessageSink, type OutgoingMessage, type SinkOptions } from './producer.ts';
export { runConsumer, type BatchContext, type ConsumerOptions, type IncomingMessage, type RunningConsumer } from './consumer.ts';
export {
  DEFAULT_TOPICS,
  MAX_MESSAGE_BYTES,
  applyTopicPlan,
  canApply,
  checkTopics,
  describeDrift,
  diffTopics,
  ensureTopics,
  readLiveTopics,
  topicPlan,
  fitReplication,
  type ApplyResult,
  type LiveTopic,
  type TopicDrift,
  type TopicNames,
  type TopicPlan,
} from './topics.ts';
export { runTopicsCommand, topicPlanFromEnv, TOPICS_USAGE } from './topicsCommand.ts';
export {
  createCommandLog,
  commandHeaders,
  withIncomingCommand,
  commandContextOf,
  type CommandLog,
  type CommandEnvelopeLike,
  type IncomingCommandContext,
} from './commandLog.ts';
export { silenceKafkajsTimeoutWarning } from './nodeWarnings.ts';
export { startLagMonitor, type LagMonitor } from './lag.ts';
export { partitionForKey, startLogPositions, type LogPositions } from './positions.ts';
// The Kafka client's settings (security, topic replication), read from the environment, and the
// rules between them that every entry point checks at start (settingsAtStart's `checks`).
export {
  readKafkaSecurity,
  describeKafkaSecurity,
  PLAINTEXT,
  SASL_MECHANISMS,
  type KafkaSecurity,
  type KafkaTls,
  type KafkaSasl,
  type SaslMechanism,
} from './kafkaSecurity.ts';
export { readTopicReplication, PRODUCTION_REPLICATION, SINGLE_BROKER_REPLICATION, type TopicReplication } from './topicReplication.ts';
export { KAFKA_SETTINGS_CHECKS } from './settingsChecks.ts';
