import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import { badRequest, notConfigured, unauthorized } from './errors.ts';

/**
 * Constant-time secret check (D9): both sides are hashed to a fixed length before comparing, so
 * neither the content nor the length leaks, and every configured secret is compared (no early exit).
 */
export function secretMatches(provided: string | undefined, secrets: readonly string[]): boolean {
  if (provided === undefined) return false;
  const p = createHash('sha256').update(provided).digest();
  let ok = false;
  for (const s of secrets) ok = timingSafeEqual(p, createHash('sha256').update(s).digest()) || ok;
  return ok;
}

/**
 * Who sent a request, for scoping its Idempotency-Key (issue 16): the kind of secret and a hash of
 * the one that authenticated it, never the secret itself.
 */
export function credentialId(kind: 'ingest' | 'cron', secret: string): string {
  return `${kind}:${createHash('sha256').update(secret).digest('hex')}`;
}

function header(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** `/api/ingest/*`, order lines, admin: x-ingest-secret (spec Authentication rules 1, 2). */
export function requireIngestSecret(secrets: readonly string[]): RequestHandler {
  return (req, res, next) => {
    if (secrets.length === 0) return next(notConfigured('INGEST_SECRET'));
    const provided = header(req.headers['x-ingest-secret']);
    if (!secretMatches(provided, secrets)) return next(unauthorized());
    res.locals['credential'] = credentialId('ingest', provided ?? '');
    next();
  };
}

/** `/api/products/bulk-upsert`: x-cron-secret and x-shop (D8). */
export function requireCronSecret(secrets: readonly string[]): RequestHandler {
  return (req, res, next) => {
    if (secrets.length === 0) return next(notConfigured('CRON_SECRET'));
    const provided = header(req.headers['x-cron-secret']);
    if (!secretMatches(provided, secrets)) return next(unauthorized());
    res.locals['credential'] = credentialId('cron', provided ?? '');
    const shop = header(req.headers['x-shop'])?.trim();
    if (!shop) return next(badRequest('x-shop header required', 'invalid_header'));
    if (shop.length > 255) return next(badRequest('x-shop must be at most 255 characters', 'invalid_header'));
    res.locals['shop'] = shop;
    next();
  };
}
