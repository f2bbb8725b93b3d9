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
import { javaArgs, kafkaServerProperties, storageFormatArgs, type DevKafkaUser, type SaslSslListener } from './kafkaServerConfig.ts';
import { devTlsPaths, makeDevTls } from './kafkaTls.ts';
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
   * A SASL_SSL listener next to the plaintext one (docs/operations.md#a-secured-dev-broker): a throwaway self-signed certificate (its
   * own CA, dataDir/tls/ca.pem) and keystore are made at each start, and the users get SCRAM-SHA-256/512
   * credentials (at format time) and PLAIN.
   */
  saslSsl?: { port: number; users: DevKafkaUser[] };
  /**
   * A node of a cluster (startKafkaCluster): its id, the controller quorum of every node, and
   * the cluster's size for the internal topics' replication. Its start waits for its own readiness only
   * (a quorum needs its peers started alongside), and leaves the group coordinator warm-up to the caller.
   */
  cluster?: { nodeId: number; voters: string; size: number };
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

const READY_LINE = 'Kafka Server started';

function javaBin(): string {
  return process.env.JAVA_HOME ? join(process.env.JAVA_HOME, 'bin', 'java') : 'java';
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
