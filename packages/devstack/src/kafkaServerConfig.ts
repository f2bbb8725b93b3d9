// What a dev Kafka node is started with: its server.properties (listeners, the KRaft quorum, the
// SASL_SSL listener), the storage format arguments (cluster id, SCRAM users) and the JVM command line.
// kafkaBroker.ts runs the processes.
import { join } from 'node:path';
import type { DevTls } from './kafkaTls.ts';
import type { KafkaDistribution } from './kafkaVersions.ts';

/** Fixed cluster id (a Kafka Uuid; the one testcontainers uses), so re-formatting is a no-op. */
export const KAFKA_CLUSTER_ID = '4L6g3nShT-eMCtK--X86sw';
const MiB = 1024 * 1024;

// Small heap (log.cleaner.dedupe.buffer.size is lowered to 16 MiB, it is allocated on the heap),
// SerialGC and C1-only compilation: faster start, little background CPU on small machines.
const JVM_FLAGS = [
  '-Xms128m',
  '-Xmx512m',
  '-XX:+UseSerialGC',
  '-XX:TieredStopAtLevel=1',
  '-XX:+ExitOnOutOfMemoryError',
  '-Djava.awt.headless=true',
  '-Djava.net.preferIPv4Stack=true',
];

export interface DevKafkaUser {
  username: string;
  password: string;
}

export interface SaslSslListener {
  port: number;
  tls: DevTls;
  users: DevKafkaUser[];
}

/**
 * One node's server.properties. A node is broker and controller; `voters` lists the controller
 * quorum (one node alone; each node of a cluster of N gets its id and the same N voters).
 */
export function kafkaServerProperties(o: {
  logDirs: string;
  port: number;
  controllerPort: number;
  nodeId?: number;
  voters?: string;
  /** Brokers in the cluster (default 1): internal topics at replication min(3, size), min ISR min(2, size). */
  clusterSize?: number;
  saslSsl?: SaslSslListener;
}): string {
  const nodeId = o.nodeId ?? 1;
  const rf = Math.min(3, o.clusterSize ?? 1);
  const minIsr = Math.min(2, rf);
  const listeners = [`PLAINTEXT://127.0.0.1:${o.port}`, `CONTROLLER://127.0.0.1:${o.controllerPort}`];
  const advertised = [`PLAINTEXT://127.0.0.1:${o.port}`];
  const protocols = ['CONTROLLER:PLAINTEXT', 'PLAINTEXT:PLAINTEXT'];
  if (o.saslSsl) {
    listeners.push(`SASL_SSL://127.0.0.1:${o.saslSsl.port}`);
    advertised.push(`SASL_SSL://127.0.0.1:${o.saslSsl.port}`);
    protocols.push('SASL_SSL:SASL_SSL');
  }
  const p: Record<string, string | number | boolean> = {
    'process.roles': 'broker,controller',
    'node.id': nodeId,
    'controller.quorum.voters': o.voters ?? `${nodeId}@127.0.0.1:${o.controllerPort}`,
    listeners: listeners.join(','),
    'advertised.listeners': advertised.join(','),
    'inter.broker.listener.name': 'PLAINTEXT',
    'controller.listener.names': 'CONTROLLER',
    'listener.security.protocol.map': protocols.join(','),
    ...(o.saslSsl ? saslSslProperties(o.saslSsl) : {}),
    'log.dirs': o.logDirs,
    // internal topics replicated as far as the cluster allows (one node: 1), one partition for a fast first use
    'offsets.topic.replication.factor': rf,
    'offsets.topic.num.partitions': 1,
    'transaction.state.log.replication.factor': rf,
    'transaction.state.log.min.isr': minIsr,
    'transaction.state.log.num.partitions': 1,
    'default.replication.factor': rf,
    'min.insync.replicas': minIsr,
    'group.initial.rebalance.delay.ms': 0,
    // topics are created explicitly (kafkajs races auto-creation); they set their own retention
    'auto.create.topics.enable': false,
    'num.partitions': 3,
    // commands of 10,000 inventory lines are several MB: 64 MiB records
    'message.max.bytes': 64 * MiB,
    'replica.fetch.max.bytes': 64 * MiB,
    'fetch.max.bytes': 64 * MiB,
    'socket.request.max.bytes': 100 * MiB, // the default, kept above message.max.bytes + request overhead
    'log.cleaner.dedupe.buffer.size': 16 * MiB, // default 128 MiB on the heap
    'num.network.threads': 2,
    'num.io.threads': 4,
  };
  return `${Object.entries(p)
    .map(([k, v]) => `${k}=${v}`)
    .join('\n')}\n`;
}

/** SCRAM (users made at format time) and PLAIN (users in the JAAS line) on the SASL_SSL listener; TLS from the throwaway keystore. */
function saslSslProperties(l: SaslSslListener): Record<string, string> {
  const scram = 'org.apache.kafka.common.security.scram.ScramLoginModule required;';
  const plainUsers = l.users.map((u) => `user_${u.username}="${u.password}"`).join(' ');
  return {
    'listener.name.sasl_ssl.sasl.enabled.mechanisms': 'SCRAM-SHA-256,SCRAM-SHA-512,PLAIN',
    'sasl.enabled.mechanisms': 'SCRAM-SHA-256,SCRAM-SHA-512,PLAIN',
    'listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config': scram,
    'listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config': scram,
    'listener.name.sasl_ssl.plain.sasl.jaas.config': `org.apache.kafka.common.security.plain.PlainLoginModule required ${plainUsers};`,
    'ssl.keystore.type': 'PKCS12',
    'ssl.keystore.location': l.tls.keystoreFile,
    'ssl.keystore.password': l.tls.keystorePassword,
    'ssl.key.password': l.tls.keystorePassword,
    'ssl.client.auth': 'none',
  };
}

/**
 * `kafka.tools.StorageTool` arguments, the same for 3.9 and 4.x: the nodes name their controllers in
 * controller.quorum.voters (a static quorum), so no --standalone or --initial-controllers (4.x refuses
 * those next to static voters). --ignore-formatted makes a second start on the same dataDir a no-op.
 */
export function storageFormatArgs(propsFile: string, users: DevKafkaUser[] = []): string[] {
  return ['format', '-t', KAFKA_CLUSTER_ID, '-c', propsFile, '--ignore-formatted', ...scramFormatArgs(users)];
}

/** `--add-scram` arguments: each user gets SCRAM-SHA-256 and SCRAM-SHA-512 credentials in the metadata log. */
export function scramFormatArgs(users: DevKafkaUser[]): string[] {
  return users.flatMap((u) =>
    ['SCRAM-SHA-256', 'SCRAM-SHA-512'].flatMap((m) => ['--add-scram', `${m}=[name=${u.username},password=${u.password}]`]),
  );
}

/** The JVM command line of one of the version's main classes: its log config flag and its own jar folder only. */
export function javaArgs(dist: KafkaDistribution, main: string, args: string[], heap?: string): string[] {
  const flags = heap ? JVM_FLAGS.map((f) => (f.startsWith('-Xmx') ? `-Xmx${heap}` : f)) : JVM_FLAGS;
  return [...flags, dist.logConfigFlag, '-cp', join(dist.libs, '*'), main, ...args];
}
