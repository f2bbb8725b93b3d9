import { pino } from 'pino';
import type { Logger } from '../src/observability/logger.ts';

/** A logger that writes nothing. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
