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
        // NUL and lone surrogates can only arrive as \u escapes (raw bytes decode to U+FFFD).
        (req as { hasEscapes?: boolean }).hasEscapes = buf.includes('\\u');
      },
    }),
    (req, _res, next) => {
      const b: unknown = req.body;
      // An empty body parses to {} in body-parser; it is not a JSON object all the same (D11).
      if (!(req as { rawBodyLength?: number }).rawBodyLength) return next(badRequest('invalid JSON body'));
      if (b === null || typeof b !== 'object' || Array.isArray(b)) return next(badRequest('invalid JSON body'));
      const bad = (req as { hasEscapes?: boolean }).hasEscapes ? unstorableText(b) : null;
      if (bad) return next(badRequest(bad));
      next();
    },
  ];
}

/**
 * PostgreSQL text and jsonb cannot hold NUL or an unpaired UTF-16 surrogate (both are valid JSON
 * escapes): refuse them here with a clear 400 rather than fail downstream.
 */
export function unstorableText(value: unknown): string | null {
  const stack: unknown[] = [value];
  while (stack.length) {
    const v = stack.pop();
    if (typeof v === 'string') {
      if (v.includes('\u0000')) return 'invalid JSON body: strings must not contain NUL (\\u0000)';
      if (!v.isWellFormed()) return 'invalid JSON body: strings must be valid Unicode (unpaired surrogate)';
    } else if (Array.isArray(v)) {
      for (const x of v as unknown[]) stack.push(x);
    } else if (v !== null && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) stack.push(k, x);
    }
  }
  return null;
}
