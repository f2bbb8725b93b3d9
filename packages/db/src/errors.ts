/**
 * A PostgreSQL failure in our terms. `unavailable`: the database cannot be reached or is going
 * away (the caller should be told 503 and retry). `transient`: a retry of the same transaction
 * may succeed (unavailable ones included, plus serialization failures, deadlocks, lock and
 * statement timeouts). Everything else is `permanent`: the same input will fail the same way.
 */
export type DbFailureKind = 'unavailable' | 'transient' | 'permanent';

const NODE_NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
  'EAI_AGAIN',
]);

// node-postgres reports a lost or unobtainable connection with plain messages and no code.
const PG_CONNECTION_MESSAGES = [
  /^Connection terminated/i,
  /timeout exceeded when trying to connect/i,
  /Client has encountered a connection error and is not queryable/i,
  /Client was closed and is not queryable/i,
  /Cannot use a pool after calling end on the pool/i,
  /Query read timeout/i,
  /connection timeout/i,
];

export function classifyDbError(err: unknown): DbFailureKind {
  const e = err as { code?: unknown; message?: unknown; errors?: unknown } | null;
  if (!e || typeof e !== 'object') return 'permanent';
  const code = typeof e.code === 'string' ? e.code : '';
  if (NODE_NETWORK_CODES.has(code)) return 'unavailable';
  // SQLSTATE classes: 08 connection exception, 57P0x shutdown / cannot connect now, 53 insufficient
  // resources (too many connections, out of memory or disk), 55000 "database is not accepting connections".
  if (/^08/.test(code) || /^57P0[1-4]$/.test(code) || /^53/.test(code) || code === '55000' || code === '3D000') return 'unavailable';
  // 40001 serialization failure, 40P01 deadlock, 55P03 lock not available, 57014 statement timeout / cancel.
  if (code === '40001' || code === '40P01' || code === '55P03' || code === '57014') return 'transient';
  const message = typeof e.message === 'string' ? e.message : '';
  if (!code && PG_CONNECTION_MESSAGES.some((re) => re.test(message))) return 'unavailable';
  // AggregateError from a dual-stack connect attempt.
  if (Array.isArray(e.errors) && e.errors.length > 0 && e.errors.every((x) => classifyDbError(x) === 'unavailable')) return 'unavailable';
  return 'permanent';
}

export const isDbUnavailable = (err: unknown): boolean => classifyDbError(err) === 'unavailable';
export const isDbTransient = (err: unknown): boolean => classifyDbError(err) !== 'permanent';
