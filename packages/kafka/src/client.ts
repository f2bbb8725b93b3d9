import type { ConnectionOptions } from 'node:tls';
import { Kafka, logLevel, type LogEntry, type SASLOptions } from 'kafkajs';
import type { KafkaSecurity } from './kafkaSecurity.ts';
import { silenceKafkajsTimeoutWarning } from './nodeWarnings.ts';

export interface KafkaLog {
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface KafkaClientOptions {
  brokers: string[];
  clientId: string;
  log?: KafkaLog;
  /** Connection timeout per broker in ms (default 3000). */
  connectionTimeout?: number;
  /** TLS and SASL (readKafkaSecurity); absent = plaintext. */
  security?: KafkaSecurity;
}

export type { Kafka };

/** One kafkajs client; its log lines go to our logger at warn/error only. */
export function createKafka(opts: KafkaClientOptions): Kafka {
  silenceKafkajsTimeoutWarning();
  const log = opts.log;
  return new Kafka({
    clientId: opts.clientId,
    brokers: opts.brokers,
    ...kafkajsSecurity(opts.security),
    connectionTimeout: opts.connectionTimeout ?? 3000,
    requestTimeout: 30000,
    retry: { initialRetryTime: 100, retries: 8, maxRetryTime: 5000 },
    logLevel: logLevel.WARN,
    logCreator:
      () =>
      ({ level, log: entry }: LogEntry) => {
        if (!log) return;
        const { message, ...rest } = entry;
        const as = kafkajsLogLevel(level, String(message), String(rest['error'] ?? ''));
        if (as === 'error') log.error({ kafkajs: rest }, String(message));
        else if (as === 'warn') log.warn({ kafkajs: rest }, String(message));
      },
  });
}

// Conditions kafkajs logs as errors while it retries or rejoins by itself: coordinators load for a
// moment after a broker starts or moves; a member rejoins when its group rebalances (another member
// joined or left, a deploy rolled). Errors on the dashboard and in alerts should be ones to act on.
const SELF_HEALING = /coordinator is loading|not the correct coordinator|no leader|group is rebalancing/i;

/** How a kafkajs log line reaches our logger: dropped, as a warning, or as an error. */
export function kafkajsLogLevel(level: logLevel, message: string, error: string): 'drop' | 'warn' | 'error' {
  // We bound the idempotent producer's retries on purpose: a caller gets 503 within seconds (D13)
  // instead of a request hanging while the broker is down; the projector's claim keeps effects exactly-once.
  if (message.startsWith('Limiting retries for the idempotent producer')) return 'drop';
  return level <= logLevel.ERROR && !SELF_HEALING.test(error) ? 'error' : 'warn';
}

/** Our security settings in kafkajs' terms; the certificate check is always on. */
export function kafkajsSecurity(security: KafkaSecurity | undefined): { ssl?: ConnectionOptions; sasl?: SASLOptions } {
  const out: { ssl?: ConnectionOptions; sasl?: SASLOptions } = {};
  const tls = security?.tls;
  if (tls) {
    out.ssl = {
      rejectUnauthorized: true,
      ...(tls.ca !== undefined ? { ca: [tls.ca] } : {}),
      ...(tls.cert !== undefined ? { cert: tls.cert } : {}),
      ...(tls.key !== undefined ? { key: tls.key.reveal() } : {}),
      ...(tls.keyPassword !== undefined ? { passphrase: tls.keyPassword.reveal() } : {}),
      ...(tls.servername !== undefined ? { servername: tls.servername } : {}),
    };
  }
  const sasl = security?.sasl;
  if (sasl) {
    const credentials = { username: sasl.username, password: sasl.password.reveal() };
    switch (sasl.mechanism) {
      case 'plain':
        out.sasl = { mechanism: 'plain', ...credentials };
        break;
      case 'scram-sha-256':
        out.sasl = { mechanism: 'scram-sha-256', ...credentials };
        break;
      case 'scram-sha-512':
        out.sasl = { mechanism: 'scram-sha-512', ...credentials };
        break;
      default: {
        const _exhaustive: never = sasl.mechanism;
        throw new Error(`unknown SASL mechanism ${String(_exhaustive)}`);
      }
    }
  }
  return out;
}
