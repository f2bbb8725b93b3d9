// Resolves the jars of an Apache Kafka broker from Maven Central into deploy/kafka/libs/<version>/
// (git-ignored) with `mvn dependency:copy-dependencies`, once per version. A marker file in that
// folder records the pom's hash, so editing deploy/kafka/pom.xml re-resolves on the next run.
// Resolved folders are also kept in a per-user cache, so another checkout copies them instead of
// starting Maven.
import { setTimeout as sleep } from 'node:timers/promises';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setting } from '@ingest/runtime';
import { kafkaDistribution, readKafkaVersion, type KafkaDistribution, type KafkaVersion } from './kafkaVersions.ts';

export type Log = (msg: string) => void;

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

const deployDir = join(repoRoot, 'deploy', 'kafka');

/** Paths of the checked-in broker assets (pom, log configs) and the folder of the per-version jar folders. */
export const kafkaPaths = {
  repoRoot,
  deployDir,
  pom: join(deployDir, 'pom.xml'),
  /** 3.x (reload4j) */
  log4j: join(deployDir, 'log4j.properties'),
  /** 4.x (log4j2) */
  log4j2: join(deployDir, 'log4j2.properties'),
  /** One folder per version below it: libs/<version>/ */
  libs: join(deployDir, 'libs'),
};

const MARKER = '.pom.sha256';
const LOCK = '.resolve.lock';

/** What the dev broker runs with KAFKA_VERSION (or `version`): its jar folder, Maven arguments and log config. */
export function kafkaDistributionFor(version: KafkaVersion = readKafkaVersion()): KafkaDistribution {
  return kafkaDistribution(version, deployDir);
}

/** The Kafka version a broker started here runs (KAFKA_VERSION, default 3.9.2). */
export function kafkaVersion(): KafkaVersion {
  return readKafkaVersion();
}

/** The pom with the version and profile (not the paths: a moved checkout keeps its jars). */
function resolveHash(d: KafkaDistribution): string {
  const selects = d.mavenArgs.filter((a) => a.startsWith('-P') || a.startsWith('-Dkafka.version='));
  return createHash('sha256')
    .update(readFileSync(kafkaPaths.pom))
    .update(`\n${selects.join(' ')}`)
    .digest('hex');
}

function upToDate(d: KafkaDistribution, hash: string): boolean {
  const marker = join(d.libs, MARKER);
  if (!existsSync(marker) || readFileSync(marker, 'utf8').trim() !== hash) return false;
  return readdirSync(d.libs).some((f) => f === `kafka_2.13-${d.version}.jar`);
}

function jarFiles(dir: string): string[] {
  return existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.jar')) : [];
}

/** Cross-process lock (mkdir is atomic), so parallel test workers resolve only once. */
async function withLock<T>(dir: string, fn: () => Promise<T>): Promise<T> {
  const lock = join(dir, LOCK);
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
 * The per-user cache of resolved jar folders, one per pom hash: KAFKA_JARS_CACHE (a folder, or `off`),
 * else ~/.cache/retail-ingest/kafka-libs. Why: every
 * fresh clone (CI's too) otherwise starts Maven to copy the same 57 jars out of ~/.m2, 3.4-5.7 s here
 * at the head of the integration tests, which wait for the broker; a copy takes a fraction of a second.
 */
export function kafkaJarsCache(env: NodeJS.ProcessEnv = process.env): string | null {
  const set = setting(env, 'KAFKA_JARS_CACHE');
  if (set === 'off') return null;
  if (set) return resolve(set);
  return join(homedir(), '.cache', 'retail-ingest', 'kafka-libs');
}

/** Copies a cached folder of this hash into `libs`; false when there is none. */
export function restoreFromCache(cache: string | null, hash: string, libs: string, version: string): boolean {
  const from = cache === null ? null : join(cache, hash);
  if (from === null || !jarFiles(from).includes(`kafka_2.13-${version}.jar`)) return false;
  for (const f of jarFiles(from)) copyFileSync(join(from, f), join(libs, f));
  return true;
}

/** Keeps a resolved folder in the cache; whole or not at all (written aside, then renamed into place). */
export function saveToCache(cache: string | null, hash: string, libs: string, log: Log): void {
  if (cache === null || existsSync(join(cache, hash))) return;
  const aside = join(cache, `${hash}.${process.pid}.tmp`);
  try {
    mkdirSync(aside, { recursive: true });
    for (const f of jarFiles(libs)) copyFileSync(join(libs, f), join(aside, f));
    renameSync(aside, join(cache, hash));
  } catch (err) {
    // a cache that cannot be written (read-only home, another process won the rename) costs the next clone a Maven run, nothing more
    rmSync(aside, { recursive: true, force: true });
    if (!existsSync(join(cache, hash))) log(`could not keep the Kafka jars in ${cache}: ${(err as Error).message}`);
  }
}

/**
 * Makes sure deploy/kafka/libs/<version>/ holds the broker jars of that version (KAFKA_VERSION by
 * default) for the current pom; runs Maven only when they are missing or the pom changed. Returns
 * that folder.
 */
export async function ensureKafkaJars(log: Log = (m) => console.error(m), version?: KafkaVersion): Promise<string> {
  const d = kafkaDistributionFor(version);
  mkdirSync(d.libs, { recursive: true });
  const hash = resolveHash(d);
  if (upToDate(d, hash)) return d.libs;
  await withLock(d.libs, async () => {
    if (upToDate(d, hash)) return; // another process resolved while we waited
    const started = Date.now();
    for (const f of jarFiles(d.libs)) rmSync(join(d.libs, f)); // no stale jars of an older pom on the classpath
    rmSync(join(d.libs, MARKER), { force: true });
    const cache = kafkaJarsCache();
    const cached = restoreFromCache(cache, hash, d.libs, d.version);
    if (!cached) {
      log(`fetching Kafka ${d.version} jars from Maven Central (first run of this version only)...`);
      await runMaven(d.mavenArgs);
    }
    const jars = jarFiles(d.libs);
    if (!jars.includes(`kafka_2.13-${d.version}.jar`)) throw new Error(`mvn finished but ${d.libs} has no kafka_2.13-${d.version}.jar`);
    const bytes = jars.reduce((n, f) => n + statSync(join(d.libs, f)).size, 0);
    writeFileSync(join(d.libs, MARKER), `${hash}\n`);
    if (!cached) saveToCache(cache, hash, d.libs, log);
    const secs = ((Date.now() - started) / 1000).toFixed(1);
    log(
      `${cached ? `copied ${jars.length} Kafka ${d.version} jars from ${cache}` : `fetched ${jars.length} jars`} (${(bytes / 1048576).toFixed(1)} MiB) in ${secs} s into ${relative(repoRoot, d.libs)}/`,
    );
  });
  return d.libs;
}
