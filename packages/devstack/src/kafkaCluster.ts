// A KRaft cluster of N local nodes (docs/operations.md#kafka-in-production): each node is broker and controller, all vote in one
// static quorum, and the internal topics are replicated 3 ways (min ISR 2) once there are 3 nodes.
// Node i listens on basePort + 100·(i-1) and controls on that + 1: 9092/9093, 9192/9193, 9292/9293;
// with `saslSsl`, clients reach it over SASL_SSL on that + 2 (the brokers talk among themselves on the
// plaintext listener, as a cluster's replication network would be kept apart from its clients').
// A node can be killed (kill -9) and started again on its data, as a failed broker would come back.
import { readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { warmUpGroupCoordinator } from './kafkaProbe.ts';
import { startKafkaBroker, type KafkaBroker, type Log } from './kafkaBroker.ts';
import type { DevKafkaUser } from './kafkaServerConfig.ts';
import { readKafkaVersion, type KafkaVersion } from './kafkaVersions.ts';

export interface StartKafkaClusterOptions {
  /** Node i keeps its data in dataDir/node-i. */
  dataDir: string;
  size: number;
  /** Node 1's listener (default 9092); node i is basePort + 100·(i-1), its controller one above. */
  basePort?: number;
  log?: Log;
  /** Ceiling for each node's format + start (default 120 s: N JVMs share the cores). */
  timeoutMs?: number;
  /** Start from empty data dirs (a fresh cluster). */
  fresh?: boolean;
  /** Default: KAFKA_VERSION (3.9.2 when unset); every node, restarts included, runs this one. */
  version?: KafkaVersion;
  /** A SASL_SSL listener on each node (SCRAM users made at format time, a throwaway certificate per node, made afresh at each start: a node restarted later has one the bundle does not hold). */
  saslSsl?: { users: DevKafkaUser[] };
}

export interface KafkaClusterNode {
  nodeId: number;
  address: string;
  pid(): number;
  running(): boolean;
  /** SIGKILL; resolves once the process is gone. */
  kill9(): Promise<void>;
  /** Starts the node again on its data dir; resolves when it serves (ms it took). */
  restart(): Promise<number>;
}

export interface KafkaCluster {
  brokers: string[];
  /** With the saslSsl option: the nodes' SASL_SSL addresses and the PEM bundle of their certificates (what clients trust). */
  saslSsl?: { brokers: string[]; caBundle: string };
  version: KafkaVersion;
  nodes: KafkaClusterNode[];
  /** Settles when the first node ends on its own (not by kill9 or stop). */
  exited: Promise<number | string>;
  /** Stops every running node (controlled shutdown, in parallel). Idempotent. */
  stop(): Promise<void>;
}

export const MAX_DEV_CLUSTER_SIZE = 5;

export function clusterPorts(size: number, basePort = 9092): Array<{ nodeId: number; port: number; controllerPort: number }> {
  return Array.from({ length: size }, (_, i) => ({ nodeId: i + 1, port: basePort + 100 * i, controllerPort: basePort + 100 * i + 1 }));
}

export async function startKafkaCluster(opts: StartKafkaClusterOptions): Promise<KafkaCluster> {
  if (!Number.isInteger(opts.size) || opts.size < 1 || opts.size > MAX_DEV_CLUSTER_SIZE) {
    throw new Error(`a dev Kafka cluster has 1 to ${MAX_DEV_CLUSTER_SIZE} nodes, not ${opts.size}`);
  }
  const log = opts.log ?? ((m: string) => console.error(m));
  const version = opts.version ?? readKafkaVersion();
  const dataDir = resolve(opts.dataDir);
  if (opts.fresh) rmSync(dataDir, { recursive: true, force: true });
  const ports = clusterPorts(opts.size, opts.basePort);
  const voters = ports.map((p) => `${p.nodeId}@127.0.0.1:${p.controllerPort}`).join(',');
  let stopping = false;
  let onExit: (v: number | string) => void = () => {};
  const exited = new Promise<number | string>((r) => (onExit = r));

  const startNode = (p: (typeof ports)[number]) =>
    startKafkaBroker({
      dataDir: join(dataDir, `node-${p.nodeId}`),
      port: p.port,
      controllerPort: p.controllerPort,
      log,
      timeoutMs: opts.timeoutMs ?? 120_000,
      cluster: { nodeId: p.nodeId, voters, size: opts.size },
      version,
      ...(opts.saslSsl ? { saslSsl: { port: p.port + 2, users: opts.saslSsl.users } } : {}),
    });

  const current = new Map<number, KafkaBroker>();
  const killed = new Set<KafkaBroker>();
  const watch = (nodeId: number, b: KafkaBroker) => {
    current.set(nodeId, b);
    void b.exited.then((code) => {
      if (!stopping && !killed.has(b)) {
        log(`Kafka node ${nodeId} exited on its own (${code}); see ${join(dataDir, `node-${nodeId}`, 'broker.out')}`);
        onExit(code);
      }
    });
  };

  // Every node at once: none reports ready before a quorum of controllers has elected a leader.
  const started = await Promise.allSettled(ports.map(startNode));
  started.forEach((r, i) => r.status === 'fulfilled' && watch(ports[i]!.nodeId, r.value));
  const failed = started.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  const stop = async () => {
    stopping = true;
    await Promise.all([...current.values()].map((b) => b.stop()));
  };
  if (failed) {
    await stop();
    throw failed.reason;
  }
  const brokers = ports.map((p) => `127.0.0.1:${p.port}`);
  // Each node made its own certificate: clients trust the bundle of all of them.
  const saslSsl = opts.saslSsl
    ? {
        brokers: ports.map((p) => `127.0.0.1:${p.port + 2}`),
        caBundle: [...current.values()].map((b) => readFileSync(b.saslSsl!.caFile, 'utf8')).join(''),
      }
    : undefined;
  await warmUpGroupCoordinator(brokers);
  log(`Kafka ${version} cluster of ${opts.size} ready on ${brokers.join(',')}`);

  const nodes: KafkaClusterNode[] = ports.map((p) => ({
    nodeId: p.nodeId,
    address: `127.0.0.1:${p.port}`,
    pid: () => current.get(p.nodeId)!.pid,
    running: () => current.has(p.nodeId),
    kill9: async () => {
      const b = current.get(p.nodeId);
      if (!b) return;
      killed.add(b);
      current.delete(p.nodeId);
      process.kill(b.pid, 'SIGKILL');
      await Promise.race([b.exited, new Promise((r) => setTimeout(r, 10_000))]);
    },
    restart: async () => {
      if (current.has(p.nodeId)) throw new Error(`Kafka node ${p.nodeId} is running`);
      const t0 = Date.now();
      watch(p.nodeId, await startNode(p));
      return Date.now() - t0;
    },
  }));
  return { brokers, version, nodes, exited, stop, ...(saslSsl ? { saslSsl } : {}) };
}
