export { createKafka, type Kafka, type KafkaClientOptions, type KafkaLog } from './client.ts';
export { classifyKafkaError, KafkaPortError, type KafkaFailure } from './errors.ts';
export { createMessageSink, type MessageSink, type OutgoingMessage, type SinkOptions } from './producer.ts';
export { runConsumer, type BatchContext, type ConsumerOptions, type IncomingMessage, type RunningConsumer } from './consumer.ts';
export { DEFAULT_TOPICS, MAX_MESSAGE_BYTES, ensureTopics, topicPlan, type TopicNames, type TopicPlan } from './topics.ts';
export { createCommandLog, type CommandLog, type CommandEnvelopeLike } from './commandLog.ts';
export { silenceKafkajsTimeoutWarning } from './nodeWarnings.ts';
export { startLagMonitor, type LagMonitor } from './lag.ts';
