import type { IncomingMessage } from 'node:http';
import type { RequestHandler } from 'express';
import { ApiError, tooManyRequests } from '../errors/catalog.ts';
import { cutRequest } from './cut.ts';

/** The part of the in-flight budget one connection may hold (docs/api.md#admission): a quarter. */
export const PER_CONNECTION_SHARE = 4;

export type InflightLimiter = RequestHandler & {
  /** Body bytes received by requests not yet answered. */
  current(): number;
  /** The most one connection may hold: MAX_INFLIGHT_BYTES / 4, so no single client holds it all. */
  perConnectionBytes: number;
  /** The handler would refuse this request at once (before reading its body), e.g. the backlog is over its bound. */
  refusesAtOnce(req: IncomingMessage): boolean;
};

const TOO_MANY = 'too many requests in flight; retry later';

/**
 * Overload bound (D13): bursts are absorbed until the body bytes of requests in flight, or the
 * projector's backlog of commands, pass their limits; then 429 with Retry-After.
 *
 * So that no client can hold the budget against everyone, it counts the bytes actually
 * received (chunked bodies included), not what a client declares, from the first byte until the
 * answer; a request whose declared body cannot fit beside what others hold is refused before it is
 * read; a body that pushes the total over the limit while it arrives is cut with 429; and one
 * connection never holds more than its share (pipelined requests on it count together; a single
 * body over the share can never be admitted, so the routes' body limit is capped at the share).
 */
export function inflightLimiter(maxBytes: number, backlog: { lag(): number | null; max: number } | null = null): InflightLimiter {
  const perConnection = Math.max(1, Math.floor(maxBytes / PER_CONNECTION_SHARE));
  let current = 0;
  const held = new WeakMap<object, number>();
  /** The refusal due before a byte of the body is read, if any. */
  const atOnce = (req: IncomingMessage): ApiError | null => {
    const lag = backlog?.lag();
    if (backlog && lag !== null && lag !== undefined && lag > backlog.max)
      return tooManyRequests(`projection backlog of ${lag} commands; retry later`, 5);
    const declared = Number(req.headers['content-length'] ?? 0) || 0;
    if (current > 0 && current + declared > maxBytes) return tooManyRequests(TOO_MANY, 1);
    const onConnection = held.get(req.socket) ?? 0;
    if (onConnection > 0 && onConnection + declared > perConnection) return tooManyRequests(TOO_MANY, 1);
    return null;
  };
  const handler: RequestHandler = (req, res, next) => {
    const refusal = atOnce(req);
    if (refusal) return next(refusal);
    const connection = req.socket;

    let charged = 0;
    let released = false;
    const onData = (chunk: Buffer): void => {
      if (released || res.headersSent) return;
      charged += chunk.length;
      current += chunk.length;
      const mine = (held.get(connection) ?? 0) + chunk.length;
      held.set(connection, mine);
      if (charged > perConnection)
        cutRequest(req, res, new ApiError(413, 'body_too_large', { ok: false, error: 'request body too large' }));
      else if (mine > perConnection || current > maxBytes) cutRequest(req, res, tooManyRequests(TOO_MANY, 1));
    };
    const release = (): void => {
      if (released) return;
      released = true;
      req.off('data', onData);
      current -= charged;
      const left = (held.get(connection) ?? 0) - charged;
      if (left > 0) held.set(connection, left);
      else held.delete(connection);
    };
    // Listening before the body parser does, in the same tick: it sees every chunk the parser sees.
    req.on('data', onData);
    res.once('finish', release);
    res.once('close', release);
    next();
  };
  return Object.assign(handler, {
    current: () => current,
    perConnectionBytes: perConnection,
    refusesAtOnce: (req: IncomingMessage) => atOnce(req) !== null,
  });
}
