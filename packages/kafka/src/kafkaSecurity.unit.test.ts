import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { describeKafkaSecurity, readKafkaSecurity, type ReadFile } from './kafkaSecurity.ts';
import { readTopicReplication } from './topicReplication.ts';

const CA = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
const KEY = '-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n';
const files: Record<string, string> = {
  '/run/secrets/ca.pem': CA,
  '/run/secrets/client.pem': CA,
  '/run/secrets/client.key': KEY,
  '/run/secrets/password': 's3cret-from-file\n',
  '/run/secrets/empty': '\n',
  '/run/secrets/not-pem': 'hello',
};
const readFile: ReadFile = (path) => {
  const text = files[path];
  if (text === undefined) throw Object.assign(new Error(`ENOENT: ${path}`), { code: 'ENOENT' });
  return text;
};
const read = (env: NodeJS.ProcessEnv) => readKafkaSecurity(env, readFile);

describe('Kafka client security settings', () => {
  it('is plaintext when nothing is set', () => {
    expect(read({})).toEqual({ tls: null, sasl: null });
    expect(describeKafkaSecurity(read({}))).toBe('PLAINTEXT');
  });

  it('reads TLS with a CA, a client certificate for mTLS and a server name', () => {
    const s = read({
      KAFKA_SSL: 'true',
      KAFKA_SSL_CA_FILE: '/run/secrets/ca.pem',
      KAFKA_SSL_CERT_FILE: '/run/secrets/client.pem',
      KAFKA_SSL_KEY_FILE: '/run/secrets/client.key',
      KAFKA_SSL_SERVERNAME: 'kafka.internal',
    });
    expect(s.tls?.ca).toBe(CA);
    expect(s.tls?.cert).toBe(CA);
    expect(s.tls?.key?.reveal()).toBe(KEY);
    expect(s.tls?.servername).toBe('kafka.internal');
    expect(describeKafkaSecurity(s)).toBe('SSL (own CA, client certificate, server name kafka.internal)');
  });

  it('TLS without a CA uses the system CAs (a managed Kafka with a public certificate)', () => {
    expect(read({ KAFKA_SSL: 'true' }).tls).toEqual({});
  });

  it.each(['plain', 'SCRAM-SHA-256', 'scram-sha-512'])('reads SASL %s, the password from a _FILE, trimmed', (mechanism) => {
    const s = read({
      KAFKA_SSL: '1',
      KAFKA_SASL_MECHANISM: mechanism,
      KAFKA_SASL_USERNAME: 'ingest',
      KAFKA_SASL_PASSWORD_FILE: '/run/secrets/password',
    });
    expect(s.sasl?.mechanism).toBe(mechanism.toLowerCase());
    expect(s.sasl?.username).toBe('ingest');
    expect(s.sasl?.password.reveal()).toBe('s3cret-from-file');
    expect(describeKafkaSecurity(s)).toBe(`SASL_SSL (${mechanism.toLowerCase()} as ingest, system CAs)`);
  });

  it('allows SCRAM without TLS (SASL_PLAINTEXT: the password never crosses the wire)', () => {
    const s = read({ KAFKA_SASL_MECHANISM: 'scram-sha-512', KAFKA_SASL_USERNAME: 'ingest', KAFKA_SASL_PASSWORD: 'pw' });
    expect(describeKafkaSecurity(s)).toBe('SASL_PLAINTEXT (scram-sha-512 as ingest)');
  });

  it.each<[string, NodeJS.ProcessEnv, string]>([
    [
      'an unknown mechanism',
      { KAFKA_SASL_MECHANISM: 'gssapi', KAFKA_SASL_USERNAME: 'u', KAFKA_SASL_PASSWORD: 'p' },
      'KAFKA_SASL_MECHANISM must be one of plain, scram-sha-256, scram-sha-512 (got gssapi)',
    ],
    [
      'a mechanism without a username',
      { KAFKA_SASL_MECHANISM: 'scram-sha-256', KAFKA_SASL_PASSWORD: 'p' },
      'KAFKA_SASL_MECHANISM=scram-sha-256 needs KAFKA_SASL_USERNAME (or KAFKA_SASL_USERNAME_FILE)',
    ],
    [
      'a mechanism without a password',
      { KAFKA_SASL_MECHANISM: 'scram-sha-256', KAFKA_SASL_USERNAME: 'u' },
      'KAFKA_SASL_MECHANISM=scram-sha-256 needs KAFKA_SASL_PASSWORD (or KAFKA_SASL_PASSWORD_FILE)',
    ],
    [
      'a username without a mechanism',
      { KAFKA_SASL_USERNAME: 'u' },
      'KAFKA_SASL_USERNAME is set but KAFKA_SASL_MECHANISM is not (one of plain, scram-sha-256, scram-sha-512)',
    ],
    [
      'PLAIN without TLS',
      { KAFKA_SASL_MECHANISM: 'plain', KAFKA_SASL_USERNAME: 'u', KAFKA_SASL_PASSWORD: 'p' },
      'KAFKA_SASL_MECHANISM=plain sends the password in clear: set KAFKA_SSL=true',
    ],
    [
      'a password and a password file',
      {
        KAFKA_SASL_MECHANISM: 'scram-sha-512',
        KAFKA_SASL_USERNAME: 'u',
        KAFKA_SASL_PASSWORD: 'p',
        KAFKA_SASL_PASSWORD_FILE: '/run/secrets/password',
      },
      'set KAFKA_SASL_PASSWORD or KAFKA_SASL_PASSWORD_FILE, not both',
    ],
    [
      'a _FILE that does not exist',
      { KAFKA_SASL_MECHANISM: 'scram-sha-512', KAFKA_SASL_USERNAME: 'u', KAFKA_SASL_PASSWORD_FILE: '/run/secrets/missing' },
      'KAFKA_SASL_PASSWORD_FILE=/run/secrets/missing cannot be read (no such file)',
    ],
    [
      'an empty _FILE',
      { KAFKA_SASL_MECHANISM: 'scram-sha-512', KAFKA_SASL_USERNAME: 'u', KAFKA_SASL_PASSWORD_FILE: '/run/secrets/empty' },
      'KAFKA_SASL_PASSWORD_FILE=/run/secrets/empty is empty',
    ],
    ['a CA without KAFKA_SSL', { KAFKA_SSL_CA_FILE: '/run/secrets/ca.pem' }, 'KAFKA_SSL_CA_FILE is set but KAFKA_SSL is not true'],
    ['KAFKA_SSL not a boolean', { KAFKA_SSL: 'yes please' }, 'KAFKA_SSL must be true or false (got yes please)'],
    [
      'a CA file that does not exist',
      { KAFKA_SSL: 'true', KAFKA_SSL_CA_FILE: '/nope.pem' },
      'KAFKA_SSL_CA_FILE=/nope.pem cannot be read (no such file)',
    ],
    [
      'a CA file that is not PEM',
      { KAFKA_SSL: 'true', KAFKA_SSL_CA_FILE: '/run/secrets/not-pem' },
      'KAFKA_SSL_CA_FILE=/run/secrets/not-pem is not a PEM certificate (-----BEGIN CERTIFICATE-----)',
    ],
    [
      'a key file that holds a certificate',
      { KAFKA_SSL: 'true', KAFKA_SSL_CERT_FILE: '/run/secrets/client.pem', KAFKA_SSL_KEY_FILE: '/run/secrets/client.pem' },
      'KAFKA_SSL_KEY_FILE=/run/secrets/client.pem is not a PEM private key (-----BEGIN ... PRIVATE KEY-----)',
    ],
    [
      'a client certificate without its key',
      { KAFKA_SSL: 'true', KAFKA_SSL_CERT_FILE: '/run/secrets/client.pem' },
      'KAFKA_SSL_CERT_FILE is set without KAFKA_SSL_KEY_FILE (mTLS needs both)',
    ],
    [
      'a client key without its certificate',
      { KAFKA_SSL: 'true', KAFKA_SSL_KEY_FILE: '/run/secrets/client.key' },
      'KAFKA_SSL_KEY_FILE is set without KAFKA_SSL_CERT_FILE (mTLS needs both)',
    ],
    [
      'a key password without a key',
      { KAFKA_SSL: 'true', KAFKA_SSL_KEY_PASSWORD: 'k' },
      'KAFKA_SSL_KEY_PASSWORD is set without KAFKA_SSL_KEY_FILE',
    ],
  ])('refuses %s with one clear error', (_name, env, message) => {
    expect(() => read(env)).toThrow(message);
  });

  it('never shows a secret in a config dump (JSON, inspect, string)', () => {
    const env = {
      KAFKA_SSL: 'true',
      KAFKA_SSL_CERT_FILE: '/run/secrets/client.pem',
      KAFKA_SSL_KEY_FILE: '/run/secrets/client.key',
      KAFKA_SASL_MECHANISM: 'scram-sha-512',
      KAFKA_SASL_USERNAME: 'ingest',
      KAFKA_SASL_PASSWORD: 'hunter2-password',
    };
    const s = read(env);
    for (const dump of [JSON.stringify(s), inspect(s, { depth: 10 }), String(s.sasl?.password), describeKafkaSecurity(s)]) {
      expect(dump).not.toContain('hunter2-password');
      expect(dump).not.toContain('MIIE');
    }
    expect(JSON.stringify(s.sasl)).toBe('{"mechanism":"scram-sha-512","username":"ingest","password":"[redacted]"}');
  });
});

describe('topic replication settings', () => {
  it('defaults to 3 and 2 for a cluster named by KAFKA_BROKERS, 1 and 1 for the dev stack', () => {
    expect(readTopicReplication({ KAFKA_BROKERS: 'k1:9092,k2:9092,k3:9092' })).toEqual({
      replicationFactor: 3,
      minInsyncReplicas: 2,
      explicit: false,
    });
    expect(readTopicReplication({})).toEqual({ replicationFactor: 1, minInsyncReplicas: 1, explicit: false });
    // the dev stack's own three-node cluster (KAFKA_CLUSTER_SIZE=3) gets the production plan
    expect(readTopicReplication({ KAFKA_CLUSTER_SIZE: '3' })).toEqual({ replicationFactor: 3, minInsyncReplicas: 2, explicit: false });
  });

  it('takes both from settings; min ISR follows a lower replication factor', () => {
    expect(readTopicReplication({ KAFKA_BROKERS: 'k:9092', KAFKA_REPLICATION_FACTOR: '5', KAFKA_MIN_INSYNC_REPLICAS: '3' })).toEqual({
      replicationFactor: 5,
      minInsyncReplicas: 3,
      explicit: true,
    });
    expect(readTopicReplication({ KAFKA_BROKERS: 'k:9092', KAFKA_REPLICATION_FACTOR: '1' })).toEqual({
      replicationFactor: 1,
      minInsyncReplicas: 1,
      explicit: true,
    });
  });

  it('refuses a min ISR above the replication factor', () => {
    expect(() => readTopicReplication({ KAFKA_REPLICATION_FACTOR: '1', KAFKA_MIN_INSYNC_REPLICAS: '2' })).toThrow(
      'KAFKA_MIN_INSYNC_REPLICAS (2) is above KAFKA_REPLICATION_FACTOR (1): every acks=all write would fail',
    );
  });
});
