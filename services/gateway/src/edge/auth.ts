import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { RequestHandler } from 'express';
import { badRequest, notConfigured, unauthorized } from '../errors/catalog.ts';

/**
 * Constant-time secret check (D9): both sides are hashed to a fixed length before comparing, so
 * neither the content nor the length leaks, and every configured secret is compared (no early exit).
 */
export function secretMatches(provided: string | undefined, secrets: readonly string[]): boolean {
  return matchedDigest(provided, secrets.map(sha256)) !== null;
}

const sha256 = (s: string): Buffer => createHash('sha256').update(s).digest();

/** The provided secret's digest when it matches one of `digests` (the configured secrets', hashed once), else null. */
function matchedDigest(provided: string | undefined, digests: readonly Buffer[]): Buffer | null {
  if (provided === undefined) return null;
  const p = sha256(provided);
  let ok = false;
  for (const d of digests) ok = timingSafeEqual(p, d) || ok;
  return ok ? p : null;
}

/**
 * Who sent a request, for scoping its Idempotency-Key: the kind of secret and a hash of
 * the one that authenticated it, never the secret itself.
 */
const credentialOf = (kind: 'ingest' | 'cron', digest: Buffer): string => `${kind}:${digest.toString('hex')}`;

function header(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/**
 * The credential id of a request's x-ingest-secret when it is one of `secrets` (hashed once here), else
 * null: requireIngestSecret's check, and shedShop.ts's before the app.
 */
export function ingestCredential(secrets: readonly string[]): (headers: IncomingHttpHeaders) => string | null {
  const digests = secrets.map(sha256);
  return (headers) => {
    const matched = matchedDigest(header(headers['x-ingest-secret']), digests);
    return matched ? credentialOf('ingest', matched) : null;
  };
}

/** `/api/ingest/*`, order lines, admin: x-ingest-secret (spec Authentication rules 1, 2). */
export function requireIngestSecret(secrets: readonly string[]): RequestHandler {
  const credentialOfRequest = ingestCredential(secrets);
  return (req, res, next) => {
    if (secrets.length === 0) return next(notConfigured('INGEST_SECRET'));
    const credential = credentialOfRequest(req.headers);
    if (!credential) return next(unauthorized());
    res.locals['credential'] = credential;
    next();
  };
}

/** `/api/products/bulk-upsert`: x-cron-secret and x-shop (D8). */
export function requireCronSecret(secrets: readonly string[]): RequestHandler {
  const digests = secrets.map(sha256);
  return (req, res, next) => {
    if (secrets.length === 0) return next(notConfigured('CRON_SECRET'));
    const matched = matchedDigest(header(req.headers['x-cron-secret']), digests);
    if (!matched) return next(unauthorized());
    res.locals['credential'] = credentialOf('cron', matched);
    const shop = header(req.headers['x-shop'])?.trim();
    if (!shop) return next(badRequest('x-shop header required', 'invalid_header'));
    if (shop.length > 255) return next(badRequest('x-shop must be at most 255 characters', 'invalid_header'));
    res.locals['shop'] = shop;
    next();
  };
}
