import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { kafkaJarsCache, restoreFromCache, saveToCache } from './kafkaJars.ts';

const dir = () => mkdtempSync(join(tmpdir(), 'kafka-jars-'));

describe('the per-user cache of resolved Kafka jars', () => {
  it('lives under ~/.cache; KAFKA_JARS_CACHE names another folder or turns it off', () => {
    expect(kafkaJarsCache({})).toBe(join(homedir(), '.cache/retail-ingest/kafka-libs'));
    expect(kafkaJarsCache({ KAFKA_JARS_CACHE: '/y/jars' })).toBe('/y/jars');
    expect(kafkaJarsCache({ KAFKA_JARS_CACHE: 'off' })).toBeNull();
  });

  it("keeps a resolved folder under the pom's hash and gives it back to another checkout", () => {
    const cache = dir();
    const resolved = dir();
    writeFileSync(join(resolved, 'kafka_2.13-3.9.2.jar'), 'broker');
    writeFileSync(join(resolved, 'zstd-jni.jar'), 'zstd');
    writeFileSync(join(resolved, '.pom.sha256'), 'h1\n'); // not a jar: the caller writes its own marker
    saveToCache(cache, 'h1', resolved, () => {});
    expect(readdirSync(cache)).toEqual(['h1']); // nothing left aside

    const fresh = dir();
    expect(restoreFromCache(cache, 'h1', fresh, '3.9.2')).toBe(true);
    expect(readdirSync(fresh).sort()).toEqual(['kafka_2.13-3.9.2.jar', 'zstd-jni.jar']);
    expect(readFileSync(join(fresh, 'kafka_2.13-3.9.2.jar'), 'utf8')).toBe('broker');
  });

  it('misses on another hash, on a folder without the broker jar and when turned off', () => {
    const cache = dir();
    mkdirSync(join(cache, 'h2'));
    writeFileSync(join(cache, 'h2', 'zstd-jni.jar'), 'zstd');
    const fresh = dir();
    expect(restoreFromCache(cache, 'h1', fresh, '3.9.2')).toBe(false);
    expect(restoreFromCache(cache, 'h2', fresh, '3.9.2')).toBe(false);
    expect(restoreFromCache(null, 'h2', fresh, '3.9.2')).toBe(false);
    expect(readdirSync(fresh)).toEqual([]);
  });

  it('a cache that cannot be written is said and skipped, not an error', () => {
    const notADir = join(dir(), 'file');
    writeFileSync(notADir, '');
    const said: string[] = [];
    const resolved = dir();
    writeFileSync(join(resolved, 'kafka_2.13-3.9.2.jar'), 'broker');
    saveToCache(notADir, 'h1', resolved, (m) => said.push(m));
    expect(said).toHaveLength(1);
    expect(existsSync(join(notADir, 'h1'))).toBe(false);
  });
});
