export {
  ensureKafkaJars,
  isKafkaReachable,
  startKafkaBroker,
  type KafkaBroker,
  type StartKafkaBrokerOptions,
  type Log,
} from './kafkaBroker.ts';
export {
  kafkaServerProperties,
  scramFormatArgs,
  storageFormatArgs,
  type DevKafkaUser,
  type SaslSslListener,
  KAFKA_CLUSTER_ID,
} from './kafkaServerConfig.ts';
export { probeKafka, type ProbeResult } from './kafkaProbe.ts';
export { kafkaDistributionFor, kafkaPaths, kafkaVersion } from './kafkaJars.ts';
export {
  DEFAULT_KAFKA_VERSION,
  KAFKA_VERSIONS,
  readKafkaVersion,
  versionedDataDir,
  type KafkaDistribution,
  type KafkaVersion,
} from './kafkaVersions.ts';
export {
  acquireKafka,
  brokersFromEnv,
  DEFAULT_LOCAL_BROKERS,
  TESTCONTAINERS_KAFKA_IMAGE,
  type AcquiredKafka,
  type KafkaSource,
} from './acquireKafka.ts';
export { prepareInfra, REPO_ROOT, type PreparedInfra } from './infra.ts';
export { makeDevTls, type DevTls } from './kafkaTls.ts';
export {
  clusterPorts,
  MAX_DEV_CLUSTER_SIZE,
  startKafkaCluster,
  type KafkaCluster,
  type KafkaClusterNode,
  type StartKafkaClusterOptions,
} from './kafkaCluster.ts';
