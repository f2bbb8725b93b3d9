import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startKafkaBroker, type KafkaBroker } from '@ingest/devstack';
import { createKafka, readKafkaSecurity, runTopicsCommand } from '@ingest/kafka';
import { newLocation, newProducts, snapshot } from '../support/inventory.ts';
import { startPipeline, type TestPipeline } from '../support/pipeline.ts';

// Issue 14 item 2: the pipeline end to end over SASL_SSL (HTTP -> Kafka -> projector -> reply) on a
// dev broker of this file's own (SCRAM users made at format time, a throwaway certificate), and the
// broker refusing a wrong password, a client without TLS and a client that does not trust its CA.
const USER = 'ingest';
const PASSWORD = 'correct-horse-battery';
const dataDir = mkdtempSync(join(tmpdir(), 'ingest-sasl-ssl-'));
let broker: KafkaBroker;
let p: TestPipeline;
let clientEnv: NodeJS.ProcessEnv;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** Bytes the broker holds for a topic: its segment files on disk (the log is this broker's own). */
function topicLogBytes(topic: string): number {
  const logs = join(dataDir, 'kraft-logs');
  return readdirSync(logs)
    .filter((d) => d.startsWith(`${topic}-`))
    .flatMap((d) =>
      readdirSync(join(logs, d))
        .filter((f) => f.endsWith('.log'))
        .map((f) => statSync(join(logs, d, f)).size),
    )
    .reduce((a, b) => a + b, 0);
}

beforeAll(async () => {
  const [port, controllerPort, saslPort] = [await freePort(), await freePort(), await freePort()];
  const started = Date.now();
  broker = await startKafkaBroker({
    dataDir,
    port,
    controllerPort,
    saslSsl: { port: saslPort, users: [{ username: USER, password: PASSWORD }] },
    log: (m) => process.stderr.write(`[sasl-ssl] ${m}\n`),
  });
  process.stderr.write(`[sasl-ssl] secured broker up in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  const passwordFile = join(dataDir, 'kafka-password');
  writeFileSync(passwordFile, `${PASSWORD}\n`, { mode: 0o600 });
  // Exactly what an operator sets (README "Kafka in production"), the password from a mounted file.
  clientEnv = {
    KAFKA_SSL: 'true',
    KAFKA_SSL_CA_FILE: broker.saslSsl!.caFile,
    KAFKA_SASL_MECHANISM: 'scram-sha-512',
    KAFKA_SASL_USERNAME: USER,
    KAFKA_SASL_PASSWORD_FILE: passwordFile,
  };
  p = await startPipeline({ kafka: { brokers: broker.saslSsl!.brokers, env: clientEnv }, env: { KAFKA_PARTITIONS: '3' } });
});

afterAll(async () => {
  await p?.stop();
  await broker?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('Kafka over SASL_SSL', () => {
  it('runs the pipeline end to end: products and a 1,000-line inventory snapshot answered by the projector', async () => {
    const shop = 'sasl-ssl.example';
    const barcodes = Array.from({ length: 1000 }, (_, i) => `49${String(1_000_000_000 + i).padStart(11, '0')}`);
    await newProducts(p, shop, barcodes);
    const location = await newLocation(p, shop, 'Shibuya store');
    const before = topicLogBytes(p.topics.commands);
    const r = await snapshot(p, {
      shop,
      source_system: 'pos',
      location_id: location,
      inventory_as_of: new Date().toISOString(),
      lines: barcodes.map((barcode, i) => ({ barcode, on_hand_qty: (i * 7) % 97, available_qty: (i * 5) % 89 })),
    });
    expect(r.status, r.text.slice(0, 300)).toBe(200);
    expect(r.json).toMatchObject({ ok: true, lines_processed: 1000, lines_upserted: 1000 });
    // The command log's growth for this command (gzip record batch, as the producer sends it).
    const bytes = topicLogBytes(p.topics.commands) - before;
    process.stderr.write(`[sasl-ssl] command log: ${bytes} bytes on disk for one 1,000-line inventory snapshot\n`);
    expect(bytes).toBeGreaterThan(0);
  });

  it('npm run topics -- --check talks SASL_SSL too, and the topics match the plan', async () => {
    const out: string[] = [];
    const env = {
      ...clientEnv,
      KAFKA_BROKERS: broker.saslSsl!.brokers.join(','),
      KAFKA_REPLICATION_FACTOR: '1',
      KAFKA_MIN_INSYNC_REPLICAS: '1',
      KAFKA_PARTITIONS: '3',
      COMMANDS_TOPIC: p.topics.commands,
      AUDIT_TOPIC: p.topics.audit,
      STOCK_ZERO_TOPIC: p.topics.stockZero,
      STOCK_RESTORED_TOPIC: p.topics.stockRestored,
    };
    // startPipeline made its topics without a replication; the plan's min.insync.replicas=1 is the broker's own.
    expect(await runTopicsCommand(['--check'], env, (l) => out.push(l))).toBe(0);
    expect(out).toEqual([`no drift: 4 topics on ${env.KAFKA_BROKERS} match the plan`]);
  });

  it('refuses a wrong password, a client without TLS and a client that does not trust the CA, each with a clear error', async () => {
    const attempt = async (env: NodeJS.ProcessEnv) => {
      const started = Date.now();
      const admin = createKafka({ brokers: broker.saslSsl!.brokers, clientId: 'refused', security: readKafkaSecurity(env) }).admin();
      try {
        await admin.connect();
        await admin.listTopics();
        return { error: 'connected', ms: Date.now() - started };
      } catch (err) {
        return { error: `${(err as Error).name}: ${(err as Error).message}`, ms: Date.now() - started };
      } finally {
        await admin.disconnect().catch(() => {});
      }
    };
    const { KAFKA_SASL_PASSWORD_FILE: _file, ...withoutPassword } = clientEnv;
    const [wrongPassword, noTls, untrusted] = await Promise.all([
      attempt({ ...withoutPassword, KAFKA_SASL_PASSWORD: 'wrong-password' }),
      attempt({ KAFKA_SASL_MECHANISM: 'scram-sha-512', KAFKA_SASL_USERNAME: USER, KAFKA_SASL_PASSWORD: PASSWORD }),
      attempt({ ...clientEnv, KAFKA_SSL_CA_FILE: '' }),
    ]);
    process.stderr.write(
      `[sasl-ssl] refused: wrong password ${wrongPassword.ms} ms, no TLS ${noTls.ms} ms, untrusted CA ${untrusted.ms} ms\n`,
    );
    // Not retried: the answer is immediate.
    expect(wrongPassword.error).toMatch(/KafkaJSSASLAuthenticationError: .*invalid credentials/);
    expect(wrongPassword.ms).toBeLessThan(10_000);
    // The broker closes a plaintext connection on its TLS port; the client gives up after its retries (~16 s), no hang.
    expect(noTls.error).toMatch(/KafkaJSNumberOfRetriesExceeded: .*Closed connection/);
    expect(untrusted.error).toMatch(/self-signed certificate/);
    expect(Math.max(noTls.ms, untrusted.ms)).toBeLessThan(45_000);
  });
});
