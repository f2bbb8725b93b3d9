// Resolves the jars of a single-node Apache Kafka broker from Maven Central into deploy/kafka/libs/
// (git-ignored) with `mvn dependency:copy-dependencies`, once. A marker file in libs/ records the
// pom's hash, so editing deploy/kafka/pom.xml (e.g. a version bump) re-resolves on the next run.
import { setTimeout as sleep } from 'node:timers/promises';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export type Log = (msg: string) => void;

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

/** Paths of the checked-in broker assets (pom, log4j config) and the resolved jar directory. */
export const kafkaPaths = {
  repoRoot,
  deployDir: join(repoRoot, 'deploy', 'kafka'),
  pom: join(repoRoot, 'deploy', 'kafka', 'pom.xml'),
  log4j: join(repoRoot, 'deploy', 'kafka', 'log4j.properties'),
  libs: join(repoRoot, 'deploy', 'kafka', 'libs'),
};

const MARKER = '.pom.sha256';
const LOCK = '.resolve.lock';

function pomHash(): string {
  return createHash('sha256').update(readFileSync(kafkaPaths.pom)).digest('hex');
}

/** The Kafka version the pom asks for (for messages only). */
export function kafkaVersion(): string {
  const m = /<kafka\.version>([^<]+)<\/kafka\.version>/.exec(readFileSync(kafkaPaths.pom, 'utf8'));
  return m?.[1]?.trim() ?? 'unknown';
}

function upToDate(hash: string): boolean {
  const marker = join(kafkaPaths.libs, MARKER);
  if (!existsSync(marker) || readFileSync(marker, 'utf8').trim() !== hash) return false;
  return readdirSync(kafkaPaths.libs).some((f) => /^kafka_2\.13-.*\.jar$/.test(f));
}

function jarFiles(): string[] {
  return existsSync(kafkaPaths.libs) ? readdirSync(kafkaPaths.libs).filter((f) => f.endsWith('.jar')) : [];
}

/** Cross-process lock (mkdir is atomic), so parallel test workers resolve only once. */
async function withLock<T>(fn: () => Promise<T>): Promise<T> {
  const lock = join(kafkaPaths.libs, LOCK);
  const deadline = Date.now() + 10 * 60_000;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      // A lock older than 10 minutes belongs to a process that died mid-resolve.
      try {
        if (Date.now() - statSync(lock).mtimeMs > 10 * 60_000) rmSync(lock, { recursive: true, force: true });
      } catch {
        /* removed concurrently */
      }
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${lock} (remove it if no mvn is running)`);
      await sleep(500);
    }
  }
  try {
    return await fn();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

function runMaven(args: string[]): Promise<void> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn('mvn', args, {
      cwd: kafkaPaths.repoRoot,
      stdio: ['ignore', 'pipe', 'pipe'],
      shell: process.platform === 'win32',
    });
    let out = '';
    const keep = (b: Buffer) => {
      out = (out + b.toString()).slice(-8000);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.on('error', (err: NodeJS.ErrnoException) => {
      reject(
        err.code === 'ENOENT'
          ? new Error(
              'Maven (mvn) is not on PATH; it is needed once to fetch the Kafka broker jars. ' +
                'Install Maven and Java 17+, or set KAFKA_BROKERS=host:port to use an existing broker.',
            )
          : err,
      );
    });
    child.on('close', (code) => {
      if (code === 0) resolvePromise();
      else reject(new Error(`mvn ${args.join(' ')} failed (exit ${code}):\n${out.trim()}`));
    });
  });
}

/**
 * Makes sure deploy/kafka/libs/ holds the broker jars for the current pom; runs Maven only when the
 * jars are missing or the pom changed. Returns the libs directory.
 */
export async function ensureKafkaJars(log: Log = (m) => console.error(m)): Promise<string> {
  mkdirSync(kafkaPaths.libs, { recursive: true });
  const hash = pomHash();
  if (upToDate(hash)) return kafkaPaths.libs;
  await withLock(async () => {
    if (upToDate(hash)) return; // another process resolved while we waited
    log(`fetching Kafka ${kafkaVersion()} jars from Maven Central (first run only)...`);
    const started = Date.now();
    for (const f of jarFiles()) rmSync(join(kafkaPaths.libs, f)); // no stale versions on the classpath
    rmSync(join(kafkaPaths.libs, MARKER), { force: true });
    await runMaven(['-B', '-q', '-f', kafkaPaths.pom, 'dependency:copy-dependencies']);
    const jars = jarFiles();
    if (!jars.some((f) => f.startsWith('kafka_2.13-'))) {
      throw new Error(`mvn finished but ${kafkaPaths.libs} has no kafka_2.13 jar`);
    }
    const bytes = jars.reduce((n, f) => n + statSync(join(kafkaPaths.libs, f)).size, 0);
    writeFileSync(join(kafkaPaths.libs, MARKER), `${hash}\n`);
    const secs = ((Date.now() - started) / 1000).toFixed(1);
    log(`fetched ${jars.length} jars (${(bytes / 1048576).toFixed(1)} MiB) in ${secs} s into deploy/kafka/libs/`);
  });
  return kafkaPaths.libs;
}
