import { pino, type Logger } from 'pino';

export type { Logger };

/** Secrets and headers never reach the log (STYLE.md). */
export const REDACT_PATHS = [
  'req.headers',
  'headers',
  '*.headers',
  'config.ingestSecrets',
  'config.cronSecrets',
  'config.databaseUrl',
  '*.password',
  'password',
];

export function createLogger(opts: { level?: string; name: string; pretty?: boolean }): Logger {
  return pino({
    name: opts.name,
    level: opts.level ?? 'info',
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    base: { service: opts.name },
  });
}

/** A logger that writes nothing (tests). */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
