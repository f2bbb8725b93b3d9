import express, { type RequestHandler } from 'express';
import { badRequest } from './errors.ts';

/**
 * JSON body parsing after auth (a request without credentials is refused before its body is
 * read). Any content type is parsed as JSON; the root must be an object (D11).
 */
export function parseJsonObject(limitBytes: number): RequestHandler[] {
  return [
    express.json({
      limit: limitBytes,
      strict: false,
      type: () => true,
      // PostgreSQL text cannot hold NUL; refuse it here rather than fail later in the projector.
      verify: (req, _res, buf) => {
        (req as { rawBodyLength?: number }).rawBodyLength = buf.length;
        if (buf.includes('\\u0000')) throw Object.assign(new Error('invalid JSON body: strings must not contain NUL (\\u0000)'), { type: 'entity.nul' });
      },
    }),
    (req, _res, next) => {
      const b: unknown = req.body;
      // An empty body parses to {} in body-parser; it is not a JSON object all the same (D11).
      if (!(req as { rawBodyLength?: number }).rawBodyLength) return next(badRequest('invalid JSON body'));
      if (b === null || typeof b !== 'object' || Array.isArray(b)) return next(badRequest('invalid JSON body'));
      next();
    },
  ];
}
