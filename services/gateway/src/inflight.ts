import type { RequestHandler } from 'express';
import { tooManyRequests } from './errors.ts';

/**
 * Overload bound (D13): bursts are absorbed until the bytes of requests in flight pass the limit;
 * then 429 with Retry-After, before the body is read.
 */
export function inflightLimiter(maxBytes: number): RequestHandler & { current(): number } {
  let current = 0;
  const handler: RequestHandler = (req, res, next) => {
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
