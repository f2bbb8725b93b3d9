import { DEFAULT_TOPICS_NAMES } from './topicDefaults.ts';
import { envDuration, envInt, envList, envString } from './env.ts';
import { readKafkaSecurity, type KafkaSecurity } from './kafkaSecurity.ts';

export interface CommonConfig {
  databaseUrl: string;
  /** Role the services act as (D25); '' keeps the connecting user. */
  dbRole: string;
  kafkaBrokers: string[];
  /** TLS and SASL for every Kafka client (README "Kafka in production"). */
  kafkaSecurity: KafkaSecurity;
  topics: { commands: string; audit: string; stockZero: string; stockRestored: string };
  kafkaPartitions: number;
  logLevel: string;
  /** How long stored results and request rows are kept: GET /api/commands/{id} says `expired` after it. */
  resultRetentionMs: number;
  /** How long per-command markers are kept: long enough to cover producer retries (issue 11). */
  markerRetentionMs: number;
  /** How long an Idempotency-Key header's answer is kept (issue 16): the gateway's window, the pruner's age. */
  idempotencyKeyTtlMs: number;
  /** Test-only crash points (runtime/failpoints.ts); empty in production. */
  failpoints: string;
}

export const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/ingest';
export const DEFAULT_KAFKA_BROKERS = '127.0.0.1:9092';

export function readCommonConfig(env: NodeJS.ProcessEnv): CommonConfig {
  return {
    databaseUrl: envString(env, 'DATABASE_URL', DEFAULT_DATABASE_URL),
    dbRole: env['DB_ROLE'] ?? 'ingest_service',
    kafkaBrokers: envList({ KAFKA_BROKERS: envString(env, 'KAFKA_BROKERS', DEFAULT_KAFKA_BROKERS) }, 'KAFKA_BROKERS'),
    kafkaSecurity: readKafkaSecurity(env),
    topics: {
      commands: envString(env, 'COMMANDS_TOPIC', DEFAULT_TOPICS_NAMES.commands),
      audit: envString(env, 'AUDIT_TOPIC', DEFAULT_TOPICS_NAMES.audit),
      stockZero: envString(env, 'STOCK_ZERO_TOPIC', DEFAULT_TOPICS_NAMES.stockZero),
      stockRestored: envString(env, 'STOCK_RESTORED_TOPIC', DEFAULT_TOPICS_NAMES.stockRestored),
    },
    kafkaPartitions: envInt(env, 'KAFKA_PARTITIONS', 6, 1),
    logLevel: envString(env, 'LOG_LEVEL', 'info'),
    resultRetentionMs: envDuration(env, 'RESULT_RETENTION', '7d', 1000),
    markerRetentionMs: envDuration(env, 'MARKER_RETENTION', '7d', 1000),
    idempotencyKeyTtlMs: envDuration(env, 'IDEMPOTENCY_KEY_TTL', '24h', 1000),
    failpoints: env['FAILPOINTS'] ?? '',
  };
}
