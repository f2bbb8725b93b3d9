import { Kafka, logLevel, type LogEntry } from 'kafkajs';
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
}

export type { Kafka };

/** One kafkajs client; its log lines go to our logger at warn/error only. */
export function createKafka(opts: KafkaClientOptions): Kafka {
  silenceKafkajsTimeoutWarning();
  const log = opts.log;
  return new Kafka({
    clientId: opts.clientId,
    brokers: opts.brokers,
    connectionTimeout: opts.connectionTimeout ?? 3000,
    requestTimeout: 30000,
    retry: { initialRetryTime: 100, retries: 8, maxRetryTime: 5000 },
    logLevel: logLevel.WARN,
    logCreator:
      () =>
      ({ level, log: entry }: LogEntry) => {
        if (!log) return;
        const { message, ...rest } = entry;
        // We bound the idempotent producer's retries on purpose: a caller gets 503 within seconds (D13)
        // instead of a request hanging while the broker is down; the projector's claim keeps effects exactly-once.
        if (String(message).startsWith('Limiting retries for the idempotent producer')) return;
        // Coordinators load for a moment after a broker starts; kafkajs retries and logs it as an error.
        const transient = /coordinator is loading|not the correct coordinator|no leader/i.test(String(rest['error'] ?? ''));
        if (level <= logLevel.ERROR && !transient) log.error({ kafkajs: rest }, String(message));
        else log.warn({ kafkajs: rest }, String(message));
      },
  });
}
