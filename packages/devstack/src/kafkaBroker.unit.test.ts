import { describe, expect, it } from 'vitest';
import { kafkaServerProperties, scramFormatArgs } from './kafkaServerConfig.ts';
import { clusterPorts } from './kafkaCluster.ts';

const props = (text: string) =>
  Object.fromEntries(
    text
      .trim()
      .split('\n')
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  );

describe('dev broker properties', () => {
  it('plaintext only by default, one node voting for itself', () => {
    const p = props(kafkaServerProperties({ logDirs: '/d', port: 9092, controllerPort: 9093 }));
    expect(p['listeners']).toBe('PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093');
    expect(p['controller.quorum.voters']).toBe('1@127.0.0.1:9093');
    expect(p['sasl.enabled.mechanisms']).toBeUndefined();
  });

  it('adds a SASL_SSL listener with SCRAM and PLAIN next to the plaintext one', () => {
    const tls = { caFile: '/d/tls/ca.pem', keystoreFile: '/d/tls/broker.p12', keystorePassword: 'ks' };
    const p = props(
      kafkaServerProperties({
        logDirs: '/d',
        port: 19092,
        controllerPort: 19093,
        saslSsl: { port: 19094, tls, users: [{ username: 'ingest', password: 'pw' }] },
      }),
    );
    expect(p['listeners']).toBe('PLAINTEXT://127.0.0.1:19092,CONTROLLER://127.0.0.1:19093,SASL_SSL://127.0.0.1:19094');
    expect(p['advertised.listeners']).toBe('PLAINTEXT://127.0.0.1:19092,SASL_SSL://127.0.0.1:19094');
    expect(p['listener.security.protocol.map']).toBe('CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SASL_SSL:SASL_SSL');
    expect(p['inter.broker.listener.name']).toBe('PLAINTEXT');
    expect(p['listener.name.sasl_ssl.sasl.enabled.mechanisms']).toBe('SCRAM-SHA-256,SCRAM-SHA-512,PLAIN');
    expect(p['listener.name.sasl_ssl.plain.sasl.jaas.config']).toBe(
      'org.apache.kafka.common.security.plain.PlainLoginModule required user_ingest="pw";',
    );
    expect(p['ssl.keystore.location']).toBe('/d/tls/broker.p12');
  });

  it('a node of a larger quorum takes its id and the voter list', () => {
    const p = props(
      kafkaServerProperties({
        logDirs: '/d',
        port: 9192,
        controllerPort: 9193,
        nodeId: 2,
        voters: '1@127.0.0.1:9093,2@127.0.0.1:9193,3@127.0.0.1:9293',
      }),
    );
    expect(p['node.id']).toBe('2');
    expect(p['controller.quorum.voters']).toBe('1@127.0.0.1:9093,2@127.0.0.1:9193,3@127.0.0.1:9293');
  });

  it('gives each user SCRAM-SHA-256 and SCRAM-SHA-512 credentials at format time', () => {
    expect(scramFormatArgs([{ username: 'ingest', password: 'pw' }])).toEqual([
      '--add-scram',
      'SCRAM-SHA-256=[name=ingest,password=pw]',
      '--add-scram',
      'SCRAM-SHA-512=[name=ingest,password=pw]',
    ]);
  });
});

describe('dev cluster nodes', () => {
  it('replicate the internal topics 3 ways with min ISR 2 in a cluster of 3; a single broker keeps 1 and 1', () => {
    const three = props(
      kafkaServerProperties({
        logDirs: '/d',
        port: 9192,
        controllerPort: 9193,
        nodeId: 2,
        voters: '1@127.0.0.1:9093,2@127.0.0.1:9193,3@127.0.0.1:9293',
        clusterSize: 3,
      }),
    );
    for (const k of ['offsets.topic.replication.factor', 'transaction.state.log.replication.factor', 'default.replication.factor'])
      expect(three[k]).toBe('3');
    for (const k of ['transaction.state.log.min.isr', 'min.insync.replicas']) expect(three[k]).toBe('2');
    const one = props(kafkaServerProperties({ logDirs: '/d', port: 9092, controllerPort: 9093 }));
    for (const k of ['offsets.topic.replication.factor', 'transaction.state.log.min.isr', 'min.insync.replicas']) expect(one[k]).toBe('1');
  });

  it('node i listens on 9092 + 100·(i-1), its controller one port above', () => {
    expect(clusterPorts(3)).toEqual([
      { nodeId: 1, port: 9092, controllerPort: 9093 },
      { nodeId: 2, port: 9192, controllerPort: 9193 },
      { nodeId: 3, port: 9292, controllerPort: 9293 },
    ]);
  });
});
