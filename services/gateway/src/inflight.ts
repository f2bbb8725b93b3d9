import type { RequestHandler } from 'express';
import { tooManyRequests } from './errors.ts';

/**
 * Overload bound (D13): bursts are absorbed until the bytes of requests in flight, or the
 * projector's backlog of commands, pass their limits; then 429 with Retry-After, before the body is read.
 */
export function inflightLimiter(
  maxBytes: number,
  backlog: { lag(): number | null; max: number } | null = null,
): RequestHandler & { current(): number } {
  let current = 0;
  const handler: RequestHandler = (req, res, next) => {
    const lag = backlog?.lag();
    if (backlog && lag !== null && lag !== undefined && lag > backlog.max)
      return next(tooManyRequests(`projection backlog of ${lag} commands; retry later`, 5));
    const size = Number(req.headers['content-length'] ?? 0) || 0;
    if (current > 0 && current + size > maxBytes) return next(tooManyRequests('too many requests in flight; retry later', 1));
    current += size;
    let released = false;
    const release = (): void => {
      if (released) return;
      released = true;
      current -= size;
    };
    res.once('finish', release);
    res.once('close', release);
    next();
  };
  return Object.assign(handler, { current: () => current });
}
