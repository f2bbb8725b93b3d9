// The Apache Kafka versions the dev broker runs (KAFKA_VERSION) and what differs between them. 3.9
// logs through log4j 1.x (reload4j); 4.x through log4j2, which reads another file format from another
// system property. Both take the same server.properties and storage format arguments: the nodes name
// their controllers statically (controller.quorum.voters), which 4.x still accepts.
import { join } from 'node:path';
import { setting } from '@ingest/runtime';

/** The versions this file knows how to run; the settings catalog's KAFKA_VERSION accepts the same (a unit test holds them together). */
export const KAFKA_VERSIONS = ['3.9.2', '4.4.0'] as const;
export type KafkaVersion = (typeof KAFKA_VERSIONS)[number];
export const DEFAULT_KAFKA_VERSION: KafkaVersion = '3.9.2';

/** KAFKA_VERSION, or the default when unset or empty; any other version is an error naming the ones there are. */
export function readKafkaVersion(env: NodeJS.ProcessEnv = process.env): KafkaVersion {
  return setting(env, 'KAFKA_VERSION');
}

/** Everything version-specific about running one Kafka version from deploy/kafka/. */
export interface KafkaDistribution {
  version: KafkaVersion;
  /** Its own jar folder, so two versions never share a classpath. */
  libs: string;
  /** `mvn` arguments that resolve exactly this version's jars into `libs`. */
  mavenArgs: string[];
  /** The logging config file and the JVM flag that points the broker at it. */
  logConfig: string;
  logConfigFlag: string;
}

export function kafkaDistribution(version: KafkaVersion, deployDir: string): KafkaDistribution {
  const libs = join(deployDir, 'libs', version);
  const log4j2 = Number(version.split('.')[0]) >= 4;
  const logConfig = join(deployDir, log4j2 ? 'log4j2.properties' : 'log4j.properties');
  return {
    version,
    libs,
    mavenArgs: [
      '-B',
      '-q',
      '-f',
      join(deployDir, 'pom.xml'),
      `-Dkafka.version=${version}`,
      `-Dkafka.libs=${libs}`,
      // the pom's logging backend for this version (see its profiles)
      `-P${log4j2 ? 'log4j2' : 'reload4j'}`,
      'dependency:copy-dependencies',
    ],
    logConfig,
    logConfigFlag: log4j2 ? `-Dlog4j2.configurationFile=file:${logConfig}` : `-Dlog4j.configuration=file:${logConfig}`,
  };
}

/**
 * Where a version keeps its broker data: the default version keeps the directory it always had; any
 * other one gets its own, so switching versions never hands one version's KRaft logs to another.
 */
export function versionedDataDir(dataDir: string, version: KafkaVersion): string {
  return version === DEFAULT_KAFKA_VERSION ? dataDir : `${dataDir}-${version}`;
}

/** Name of the file in a broker's data dir that records the version that formatted it. */
export const FORMATTED_BY_FILE = 'kafka.version';

/**
 * Whether a data dir may be started with `version`: fine when it was never formatted or was formatted
 * by the same version. A formatted dir without a record predates KAFKA_VERSION, when 3.9.2 was the
 * only version. Returns the reason to refuse, or undefined.
 */
export function dataDirMismatch(o: {
  dataDir: string;
  formatted: boolean;
  recorded: string | undefined;
  version: KafkaVersion;
}): string | undefined {
  if (!o.formatted) return undefined;
  const by = o.recorded?.trim() || '3.9.2';
  if (by === o.version) return undefined;
  return (
    `${o.dataDir} was formatted by Kafka ${by}, not ${o.version}: a KRaft data dir is not carried across versions here. ` +
    `Set KAFKA_VERSION=${by}, or remove ${o.dataDir} to start afresh`
  );
}
