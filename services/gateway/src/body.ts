import express, { type RequestHandler } from 'express';
import { badRequest } from './errors.ts';

/**
 * JSON body parsing after auth (a request without credentials is refused before its body is
 * read). Any content type is parsed as JSON; the root must be an object (D11).
 */
export function parseJsonObject(limitBytes: number): RequestHandler[] {
  return [
    express.json({ limit: limitBytes, strict: false, type: () => true }),
    (req, _res, next) => {
      const b: unknown = req.body;
      if (b === null || typeof b !== 'object' || Array.isArray(b)) return next(badRequest('invalid JSON body'));
      next();
    },
  ];
}
