import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SETTINGS } from '@ingest/runtime';
import { javaArgs, kafkaServerProperties, storageFormatArgs } from './kafkaServerConfig.ts';
import { kafkaDistributionFor, kafkaPaths } from './kafkaJars.ts';
import {
  dataDirMismatch,
  DEFAULT_KAFKA_VERSION,
  kafkaDistribution,
  KAFKA_VERSIONS,
  readKafkaVersion,
  versionedDataDir,
} from './kafkaVersions.ts';

const props = (text: string): Record<string, string> =>
  Object.fromEntries(
    text
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith('#'))
      .map((l) => [l.slice(0, l.indexOf('=')).trim(), l.slice(l.indexOf('=') + 1).trim()]),
  );

describe('KAFKA_VERSION', () => {
  it('is the settings catalog entry, accepting exactly the versions devstack knows how to run', () => {
    expect(SETTINGS.KAFKA_VERSION.default).toBe(DEFAULT_KAFKA_VERSION);
    expect(SETTINGS.KAFKA_VERSION.kind.accepts).toBe(`one of ${KAFKA_VERSIONS.join(', ')}`);
    for (const v of KAFKA_VERSIONS) expect(readKafkaVersion({ KAFKA_VERSION: v })).toBe(v);
  });

  it('is 3.9.2 when unset or empty, takes 4.4.0, and refuses any other version by name', () => {
    expect(DEFAULT_KAFKA_VERSION).toBe('3.9.2');
    expect(readKafkaVersion({})).toBe('3.9.2');
    expect(readKafkaVersion({ KAFKA_VERSION: '' })).toBe('3.9.2');
    expect(readKafkaVersion({ KAFKA_VERSION: ' 4.4.0 ' })).toBe('4.4.0');
    expect(() => readKafkaVersion({ KAFKA_VERSION: '4.3.1' })).toThrow('KAFKA_VERSION must be one of 3.9.2, 4.4.0 (got "4.3.1")');
    expect(() => readKafkaVersion({ KAFKA_VERSION: '4' })).toThrow('must be one of');
  });
});

describe('each version runs from its own jars and log config', () => {
  const deploy = '/repo/deploy/kafka';
  const v3 = kafkaDistribution('3.9.2', deploy);
  const v4 = kafkaDistribution('4.4.0', deploy);

  it('resolves into deploy/kafka/libs/<version>/ with the logging profile of its line', () => {
    expect(v3.libs).toBe('/repo/deploy/kafka/libs/3.9.2');
    expect(v4.libs).toBe('/repo/deploy/kafka/libs/4.4.0');
    expect(v3.mavenArgs).toEqual([
      '-B',
      '-q',
      '-f',
      '/repo/deploy/kafka/pom.xml',
      '-Dkafka.version=3.9.2',
      '-Dkafka.libs=/repo/deploy/kafka/libs/3.9.2',
      '-Preload4j',
      'dependency:copy-dependencies',
    ]);
    expect(v4.mavenArgs).toContain('-Dkafka.version=4.4.0');
    expect(v4.mavenArgs).toContain('-Dkafka.libs=/repo/deploy/kafka/libs/4.4.0');
    expect(v4.mavenArgs).toContain('-Plog4j2');
  });

  it('3.9 reads log4j 1.x properties, 4.x log4j2 properties, each through its own system property', () => {
    expect(v3.logConfigFlag).toBe('-Dlog4j.configuration=file:/repo/deploy/kafka/log4j.properties');
    expect(v4.logConfigFlag).toBe('-Dlog4j2.configurationFile=file:/repo/deploy/kafka/log4j2.properties');
  });

  it('puts only its own jar folder on the classpath of the broker and of the storage tool', () => {
    for (const [d, other] of [
      [v3, v4],
      [v4, v3],
    ] as const) {
      const broker = javaArgs(d, 'kafka.Kafka', ['/data/server.properties']);
      expect(broker.slice(-4)).toEqual(['-cp', `${d.libs}/*`, 'kafka.Kafka', '/data/server.properties']);
      expect(broker).toContain(d.logConfigFlag);
      expect(broker.join(' ')).not.toContain(other.libs);
      const format = javaArgs(d, 'kafka.tools.StorageTool', ['format'], '256m');
      expect(format).toContain('-Xmx256m');
      expect(format.slice(-4)).toEqual(['-cp', `${d.libs}/*`, 'kafka.tools.StorageTool', 'format']);
    }
  });

  it('ships both log configs in deploy/kafka/: WARN to stdout, the readiness logger at INFO', () => {
    const d3 = kafkaDistributionFor('3.9.2');
    const d4 = kafkaDistributionFor('4.4.0');
    expect(d4.libs).toBe(join(kafkaPaths.libs, '4.4.0'));
    expect([d3.logConfig, d4.logConfig]).toEqual([kafkaPaths.log4j, kafkaPaths.log4j2]);
    const l3 = props(readFileSync(d3.logConfig, 'utf8'));
    expect(l3['log4j.rootLogger']).toBe('WARN, stdout');
    expect(l3['log4j.logger.kafka.server.KafkaRaftServer']).toBe('INFO');
    const l4 = props(readFileSync(d4.logConfig, 'utf8'));
    expect(l4['rootLogger.level']).toBe('warn');
    expect(l4['appender.stdout.type']).toBe('Console');
    const ready = Object.keys(l4).find((k) => l4[k] === 'kafka.server.KafkaRaftServer')!;
    expect(ready).toMatch(/^logger\.\w+\.name$/);
    expect(l4[ready.replace(/name$/, 'level')]).toBe('info');
  });

  it('has a pom profile for each logging backend it names', () => {
    const pom = readFileSync(kafkaPaths.pom, 'utf8');
    for (const d of KAFKA_VERSIONS.map((v) => kafkaDistributionFor(v))) {
      const profile = d.mavenArgs.find((a) => a.startsWith('-P'))!.slice(2);
      expect(pom).toContain(`<id>${profile}</id>`);
      expect(existsSync(d.logConfig)).toBe(true);
    }
    expect(pom).toContain('<kafka.libs>${project.basedir}/libs/${kafka.version}</kafka.libs>');
  });
});

describe('storage format and data dirs across versions', () => {
  it('formats a static quorum the same way on 3.9 and 4.x (no --standalone or --initial-controllers)', () => {
    const args = storageFormatArgs('/d/server.properties', [{ username: 'ingest', password: 'pw' }]);
    expect(args).toEqual([
      'format',
      '-t',
      '4L6g3nShT-eMCtK--X86sw',
      '-c',
      '/d/server.properties',
      '--ignore-formatted',
      '--add-scram',
      'SCRAM-SHA-256=[name=ingest,password=pw]',
      '--add-scram',
      'SCRAM-SHA-512=[name=ingest,password=pw]',
    ]);
    expect(storageFormatArgs('/d/server.properties')).toEqual(args.slice(0, 6));
    // 4.x refuses --standalone / --initial-controllers next to controller.quorum.voters, which every node sets.
    const p = props(kafkaServerProperties({ logDirs: '/d', port: 9092, controllerPort: 9093 }));
    expect(p['controller.quorum.voters']).toBe('1@127.0.0.1:9093');
    expect(p['controller.quorum.bootstrap.servers']).toBeUndefined();
  });

  it('keeps the default version in the data dir it always had, and gives another version its own', () => {
    expect(versionedDataDir('/r/.data/kafka', '3.9.2')).toBe('/r/.data/kafka');
    expect(versionedDataDir('/r/.data/kafka', '4.4.0')).toBe('/r/.data/kafka-4.4.0');
    expect(versionedDataDir('/r/.data/kafka-cluster', '4.4.0')).toBe('/r/.data/kafka-cluster-4.4.0');
  });

  it('refuses a data dir formatted by another version; one without a record is from 3.9.2', () => {
    const at = (formatted: boolean, recorded: string | undefined, version: '3.9.2' | '4.4.0') =>
      dataDirMismatch({ dataDir: '/d', formatted, recorded, version });
    expect(at(false, undefined, '4.4.0')).toBeUndefined();
    expect(at(false, '3.9.2\n', '4.4.0')).toBeUndefined(); // recorded, but the logs were removed: formats afresh
    expect(at(true, '4.4.0\n', '4.4.0')).toBeUndefined();
    expect(at(true, undefined, '3.9.2')).toBeUndefined();
    expect(at(true, undefined, '4.4.0')).toBe(
      '/d was formatted by Kafka 3.9.2, not 4.4.0: a KRaft data dir is not carried across versions here. ' +
        'Set KAFKA_VERSION=3.9.2, or remove /d to start afresh',
    );
    expect(at(true, '4.4.0\n', '3.9.2')).toMatch(/^\/d was formatted by Kafka 4\.4\.0, not 3\.9\.2/);
  });
});
