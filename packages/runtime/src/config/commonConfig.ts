import { setting } from './settings.ts';
import { SETTINGS } from './catalog.ts';

export interface CommonConfig {
  databaseUrl: string;
  /** Role the services act as (D25); '' keeps the connecting user. */
  dbRole: string;
  kafkaBrokers: string[];
  topics: { commands: string; audit: string; stockZero: string; stockRestored: string };
  kafkaPartitions: number;
  logLevel: string;
  /** How long stored results and request rows are kept: GET /api/commands/{id} says `expired` after it. */
  resultRetentionMs: number;
  /** How long per-command markers are kept: long enough to cover producer retries (docs/operations.md#retention). */
  markerRetentionMs: number;
  /** How long an Idempotency-Key header's answer is kept: the gateway's window, the pruner's age. */
  idempotencyKeyTtlMs: number;
  /** Test-only crash points (runtime process/failpoints.ts); empty in production. */
  failpoints: string;
}

export const DEFAULT_DATABASE_URL = SETTINGS.DATABASE_URL.default;
export const DEFAULT_KAFKA_BROKERS = SETTINGS.KAFKA_BROKERS.default;

/** What every process reads (catalog.ts). */
export function readCommonConfig(env: NodeJS.ProcessEnv): CommonConfig {
  return {
    databaseUrl: setting(env, 'DATABASE_URL'),
    dbRole: setting(env, 'DB_ROLE'),
    kafkaBrokers: setting(env, 'KAFKA_BROKERS'),
    topics: {
      commands: setting(env, 'COMMANDS_TOPIC'),
      audit: setting(env, 'AUDIT_TOPIC'),
      stockZero: setting(env, 'STOCK_ZERO_TOPIC'),
      stockRestored: setting(env, 'STOCK_RESTORED_TOPIC'),
    },
    kafkaPartitions: setting(env, 'KAFKA_PARTITIONS'),
    logLevel: setting(env, 'LOG_LEVEL'),
    resultRetentionMs: setting(env, 'RESULT_RETENTION'),
    markerRetentionMs: setting(env, 'MARKER_RETENTION'),
    idempotencyKeyTtlMs: setting(env, 'IDEMPOTENCY_KEY_TTL'),
    failpoints: setting(env, 'FAILPOINTS') ?? '',
  };
}
