// A real single-node Apache Kafka broker (KRaft, combined broker+controller), 3.9.2 or 4.4.0
// (KAFKA_VERSION), run straight from the Maven Central jars in deploy/kafka/libs/<version>/ with
// `java`: no Docker, no Kafka tarball. Research: /work/shared/notes/local-kafka.md (sections 3-5).
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createServer } from 'node:net';
import { createInterface } from 'node:readline';
import { probeKafka, warmUpGroupCoordinator } from './kafkaProbe.ts';
import { ensureKafkaJars, kafkaDistributionFor, type Log } from './kafkaJars.ts';
import { devTlsPaths, makeDevTls, type DevTls } from './kafkaTls.ts';
import { dataDirMismatch, FORMATTED_BY_FILE, readKafkaVersion, type KafkaDistribution, type KafkaVersion } from './kafkaVersions.ts';

export { ensureKafkaJars, type Log } from './kafkaJars.ts';
export { isKafkaReachable } from './kafkaProbe.ts';

export interface StartKafkaBrokerOptions {
  /** Holds server.properties, the KRaft log dirs, broker.pid and broker.out (the broker's output). */
  dataDir: string;
  /** PLAINTEXT listener on 127.0.0.1 (default 9092). */
  port?: number;
  /** CONTROLLER listener on 127.0.0.1 (default 9093). */
  controllerPort?: number;
  log?: Log;
  /** Ceiling for format + start + admin probe (default 90 s). */
  timeoutMs?: number;
  /** Default: KAFKA_VERSION (3.9.2 when unset). A dataDir formatted by another version is refused. */
  version?: KafkaVersion;
  /**
   * A SASL_SSL listener next to the plaintext one (issue 14): a throwaway self-signed certificate (its
   * own CA, dataDir/tls/ca.pem) and keystore are made at each start, and the users get SCRAM-SHA-256/512
   * credentials (at format time) and PLAIN.
   */
  saslSsl?: { port: number; users: DevKafkaUser[] };
  /**
   * A node of a cluster (issue 14, startKafkaCluster): its id, the controller quorum of every node, and
   * the cluster's size for the internal topics' replication. Its start waits for its own readiness only
   * (a quorum needs its peers started alongside), and leaves the group coordinator warm-up to the caller.
   */
  cluster?: { nodeId: number; voters: string; size: number };
}

export interface DevKafkaUser {
  username: string;
  password: string;
}

export interface KafkaBroker {
  brokers: string[];
  pid: number;
  version: KafkaVersion;
  /** SIGTERM, wait for the controlled shutdown, SIGKILL after 20 s. Idempotent. */
  stop(): Promise<void>;
  /** Settles with the exit code (or signal name) when the broker process ends, for whatever reason. */
  exited: Promise<number | string>;
  /** With the saslSsl option: its bootstrap address and the CA file clients trust. */
  saslSsl?: { brokers: string[]; caFile: string };
}

/** Fixed cluster id (a Kafka Uuid; the one testcontainers uses), so re-formatting is a no-op. */
export const KAFKA_CLUSTER_ID = '4L6g3nShT-eMCtK--X86sw';
const READY_LINE = 'Kafka Server started';
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

function javaBin(): string {
  return process.env.JAVA_HOME ? join(process.env.JAVA_HOME, 'bin', 'java') : 'java';
}

/** The JVM command line of one of the version's main classes: its log config flag and its own jar folder only. */
export function javaArgs(dist: KafkaDistribution, main: string, args: string[], heap?: string): string[] {
  const flags = heap ? JVM_FLAGS.map((f) => (f.startsWith('-Xmx') ? `-Xmx${heap}` : f)) : JVM_FLAGS;
  return [...flags, dist.logConfigFlag, '-cp', join(dist.libs, '*'), main, ...args];
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Fails fast with a clear message when something else already listens on a port we need. */
function assertPortFree(port: number, what: string): Promise<void> {
  return new Promise((resolveP, reject) => {
    const server = createServer();
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        err.code === 'EADDRINUSE' ? new Error(`cannot start Kafka: 127.0.0.1:${port} (${what}) is already in use by another process`) : err,
      ),
    );
    server.listen({ port, host: '127.0.0.1', exclusive: true }, () => server.close(() => resolveP()));
  });
}

/** Runs `kafka.tools.StorageTool format` (a main class of the core jar in 3.9 and 4.x alike). */
function formatStorage(dist: KafkaDistribution, args: string[]): Promise<void> {
  return new Promise((resolveP, reject) => {
    const child = spawn(javaBin(), javaArgs(dist, 'kafka.tools.StorageTool', args, '256m'), { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const keep = (b: Buffer) => (out = (out + b.toString()).slice(-8000));
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.on('error', (err) => reject(new Error(`could not run java (Java 17+ needed on PATH or JAVA_HOME): ${err.message}`)));
    child.on('close', (code) =>
      code === 0 ? resolveP() : reject(new Error(`kafka storage format failed (exit ${code}):\n${out.trim()}`)),
    );
  });
}

export async function startKafkaBroker(opts: StartKafkaBrokerOptions): Promise<KafkaBroker> {
  const log = opts.log ?? ((m: string) => console.error(m));
  const port = opts.port ?? 9092;
  const controllerPort = opts.controllerPort ?? 9093;
  const dataDir = resolve(opts.dataDir);
  const brokers = [`127.0.0.1:${port}`];
  const version = opts.version ?? readKafkaVersion();
  const dist = kafkaDistributionFor(version);
  await ensureKafkaJars(log, version); // cheap when deploy/kafka/libs/<version>/ is up to date

  mkdirSync(dataDir, { recursive: true });
  const logDirs = join(dataDir, 'kraft-logs');
  const formattedBy = join(dataDir, FORMATTED_BY_FILE);
  const mismatch = dataDirMismatch({
    dataDir,
    formatted: existsSync(join(logDirs, 'meta.properties')),
    recorded: existsSync(formattedBy) ? readFileSync(formattedBy, 'utf8') : undefined,
    version,
  });
  if (mismatch) throw new Error(mismatch);
  const pidFile = join(dataDir, 'broker.pid');
  if (existsSync(pidFile)) {
    const old = Number(readFileSync(pidFile, 'utf8').trim());
    const cmdline = existsSync(`/proc/${old}/cmdline`) ? readFileSync(`/proc/${old}/cmdline`, 'utf8') : '';
    if (old > 0 && isAlive(old) && (cmdline === '' || cmdline.includes('kafka.Kafka'))) {
      throw new Error(`a Kafka broker (pid ${old}) is still running on ${dataDir}; stop it first (kill ${old})`);
    }
  }
  await assertPortFree(port, 'Kafka listener');
  await assertPortFree(controllerPort, 'KRaft controller listener');
  const tlsAt = Date.now();
  let saslSsl: SaslSslListener | undefined;
  if (opts.saslSsl) {
    for (const u of opts.saslSsl.users) {
      if (!/^[\w.-]+$/.test(u.username) || !/^[\w.-]+$/.test(u.password))
        throw new Error(`dev Kafka user ${u.username}: name and password may hold only letters, digits, _ . -`);
    }
    await assertPortFree(opts.saslSsl.port, 'Kafka SASL_SSL listener');
    saslSsl = { port: opts.saslSsl.port, users: opts.saslSsl.users, tls: devTlsPaths(join(dataDir, 'tls')) };
  }
  // keytool runs while the storage is formatted (both are JVM starts; format does not read the keystore).
  const commonName = opts.cluster ? `kafka-node-${opts.cluster.nodeId}.localhost` : 'localhost';
  const tlsMade = saslSsl ? makeDevTls(join(dataDir, 'tls'), saslSsl.tls, commonName).then(() => Date.now()) : Promise.resolve(tlsAt);
  tlsMade.catch(() => {});
  const propsFile = join(dataDir, 'server.properties');
  const node = opts.cluster ? { nodeId: opts.cluster.nodeId, voters: opts.cluster.voters, clusterSize: opts.cluster.size } : {};
  writeFileSync(propsFile, kafkaServerProperties({ logDirs, port, controllerPort, ...node, ...(saslSsl ? { saslSsl } : {}) }), {
    mode: 0o600,
  });
  const formatAt = Date.now();
  const deadline = formatAt + (opts.timeoutMs ?? 90_000); // not counting a first-run jar download
  // SCRAM credentials live in the metadata log: written at format time (a formatted dir keeps its old ones).
  await formatStorage(dist, storageFormatArgs(propsFile, saslSsl?.users));
  writeFileSync(formattedBy, `${version}\n`);
  const tlsReadyAt = await tlsMade;

  const startedAt = Date.now();
  const child: ChildProcess = spawn(javaBin(), javaArgs(dist, 'kafka.Kafka', [propsFile]), {
    cwd: dataDir,
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group: a terminal's Ctrl-C reaches the pipeline, which stops the broker last,
    // after the projector has let go of it. (An orphan left by a SIGKILL is reused on the next start.)
    detached: true,
  });
  const pid = child.pid;
  if (pid === undefined) {
    const err = await new Promise<Error>((r) => child.once('error', r));
    throw new Error(`could not run java (Java 17+ needed on PATH or JAVA_HOME): ${err.message}`);
  }
  writeFileSync(pidFile, `${pid}\n`);

  const tail: string[] = [];
  const outFile = createWriteStream(join(dataDir, 'broker.out'));
  let sawReady = false;
  let onReadyLine = () => {};
  for (const stream of [child.stdout!, child.stderr!]) {
    createInterface({ input: stream, crlfDelay: Infinity }).on('line', (line) => {
      outFile.write(`${line}\n`);
      tail.push(line);
      if (tail.length > 200) tail.shift();
      if (!sawReady && line.includes(READY_LINE)) {
        sawReady = true;
        onReadyLine();
      }
    });
  }
  let exitedFlag = false;
  const exited = new Promise<number | string>((r) =>
    // 'close', not 'exit': stdout/stderr are drained by then, so the tail holds the last words
    child.once('close', (code, signal) => {
      exitedFlag = true;
      process.removeListener('exit', killOnExit);
      rmSync(pidFile, { force: true });
      r(code ?? signal ?? 'unknown');
    }),
  );
  // Safety net: if this Node process exits without stop(), do not leave the broker behind.
  const killOnExit = () => child.kill('SIGTERM');
  process.on('exit', killOnExit);
  void exited.finally(() => outFile.end());

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopping ??= (async () => {
      if (exitedFlag) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      await exited;
      clearTimeout(timer);
    })());

  const failure = (why: string) => {
    // stack frames are in broker.out; the message keeps the log lines and "Caused by:" chain
    const lines = tail.filter((l) => !/^\s+(at |\.\.\. \d+ more)/.test(l)).slice(-25);
    return new Error(
      `Kafka broker on ${brokers[0]} ${why}. Last broker output (full: ${join(dataDir, 'broker.out')}):\n${lines.join('\n')}`,
    );
  };

  try {
    // 1. the readiness log line (logged only once the broker is unfenced and serving requests)
    await new Promise<void>((resolveP, reject) => {
      const timer = setTimeout(() => reject(failure('did not log "Kafka Server started" in time')), Math.max(0, deadline - Date.now()));
      onReadyLine = () => (clearTimeout(timer), resolveP());
      if (sawReady) onReadyLine();
      void exited.then((code) => (clearTimeout(timer), reject(failure(`exited early (${code})`))));
    });
    // 2. belt and braces: an admin client from Node can describe the cluster (advertised listener reachable)
    for (let lastErr = ''; ;) {
      if (exitedFlag) throw failure(`exited early (${await exited})`);
      const r = await probeKafka(brokers, 3000);
      if (r.ok) break;
      lastErr = r.error;
      if (Date.now() > deadline) throw failure(`did not answer describeCluster in time (${lastErr})`);
      await new Promise((r2) => setTimeout(r2, 250));
    }
  } catch (err) {
    await stop();
    throw err;
  }
  const readyAt = Date.now();
  if (!opts.cluster) await warmUpGroupCoordinator(brokers);
  const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  const tlsNote = saslSsl
    ? `, SASL_SSL on 127.0.0.1:${saslSsl.port} (certificate and keystore ${secs(tlsReadyAt - tlsAt)}, alongside the format)`
    : '';
  log(
    `Kafka ${version} ${opts.cluster ? `node ${opts.cluster.nodeId}` : 'broker'} ready on ${brokers[0]} (pid ${pid}; storage format ${secs(startedAt - formatAt)}, ` +
      `start ${secs(readyAt - startedAt)}${opts.cluster ? '' : `, __consumer_offsets ${secs(Date.now() - readyAt)}`}${tlsNote})`,
  );
  return {
    brokers,
    pid,
    version,
    stop,
    exited,
    ...(saslSsl ? { saslSsl: { brokers: [`127.0.0.1:${saslSsl.port}`], caFile: saslSsl.tls.caFile } } : {}),
  };
}
