import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { RequestHandler, Response } from 'express';
import type { KeyPrincipal, KeyService, Scope } from '@ingest/access';
import { setLogActor } from '@ingest/runtime';
import { ApiError, badRequest, notConfigured } from '../errors/catalog.ts';

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
 * the one that authenticated it (or the key's id), never the secret itself.
 */
const credentialOf = (kind: 'ingest' | 'cron', digest: Buffer): string => `${kind}:${digest.toString('hex')}`;

function header(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/**
 * The credential id of a request's x-ingest-secret when it is one of `secrets` (hashed once here), else
 * null: intake.ts's shedShop check before the app.
 */
export function ingestCredential(secrets: readonly string[]): (headers: IncomingHttpHeaders) => string | null {
  const digests = secrets.map(sha256);
  return (headers) => {
    const matched = matchedDigest(header(headers['x-ingest-secret']), digests);
    return matched ? credentialOf('ingest', matched) : null;
  };
}

/** How a gateway authenticates (spec "Authentication", D9, D28). */
export interface AccessConfig {
  ingestSecrets: readonly string[];
  cronSecrets: readonly string[];
  /** PLATFORM_SECRETS_FOR_RETAILERS: false refuses the shared secrets on retailer endpoints (D28). */
  platformSecretsForRetailers: boolean;
  /** Per-shop keys; null when API_KEY_PEPPER is not set (every Bearer key is then 401). */
  keys: KeyService | null;
}

/** What an endpoint accepts. */
export interface AccessRule {
  /** The spec's shared secret of the endpoint: x-ingest-secret, x-cron-secret with x-shop, or either (GET /api/commands/{id}). */
  platform: 'ingest' | 'cron' | 'ingest-or-cron';
  /** The scope a per-shop key needs; null: platform only (the daily snapshot, the keys endpoints). */
  scope: Scope | null;
  /** A retailer endpoint: PLATFORM_SECRETS_FOR_RETAILERS=off refuses the shared secrets here. */
  retailer: boolean;
}

/** Who a request is (res.locals['principal']): the platform, for every shop, or one shop's key. */
export type Principal = { actor: 'platform' } | { actor: string; key: KeyPrincipal };

/** The principal authenticated for this request (requireAccess sets it before any route runs). */
export const principalOf = (res: Response): Principal => (res.locals['principal'] as Principal | undefined) ?? { actor: 'platform' };

/** The shop a per-shop key binds this request to; null for the platform credential. */
export const keyShopOf = (res: Response): string | null => {
  const p = principalOf(res);
  return 'key' in p ? p.key.shop : null;
};

// RFC 9110 §11.6.1: a 401 names the scheme that would be accepted; the spec's body text is kept.
const unauthorized = (): ApiError => new ApiError(401, 'unauthorized', 'unauthorized', { 'WWW-Authenticate': 'Bearer' });
export const forbiddenShop = (): ApiError => new ApiError(403, 'forbidden_shop', { ok: false, error: 'forbidden for this shop' });
// RFC 6750 §3.1: insufficient_scope names the scope the request needed.
const missingScope = (scope: Scope): ApiError =>
  new ApiError(
    403,
    'missing_scope',
    { ok: false, error: `missing scope ${scope}` },
    { 'WWW-Authenticate': `Bearer error="insufficient_scope", scope="${scope}"` },
  );
const platformOnly = (): ApiError =>
  new ApiError(403, 'platform_only', { ok: false, error: 'this endpoint requires the platform credential' });

const BEARER = /^Bearer +(\S+) *$/i;

/**
 * The front door of every endpoint but the open ones (docs/api.md "Authentication"): the spec's
 * shared secrets as the spec says (they stand for the platform, valid for every shop), else a
 * per-shop key as `Authorization: Bearer` (D28), which stands for its shop: its scope is checked
 * here, an `x-shop` naming another shop is refused here, and the body's `shop` once it is parsed
 * (ownShop). A key that is not cached costs one indexed read; while PostgreSQL is down that read
 * fails and the request gets 503 with Retry-After (the error handler), never a 401 it did not earn.
 */
export function requireAccess(config: AccessConfig, rule: AccessRule): RequestHandler {
  const ingest = rule.platform === 'cron' ? [] : config.ingestSecrets.map(sha256);
  const cron = rule.platform === 'ingest' ? [] : config.cronSecrets.map(sha256);
  const platformAllowed = !rule.retailer || config.platformSecretsForRetailers;
  return async (req, res, next) => {
    if (platformAllowed) {
      const ingestDigest = matchedDigest(header(req.headers['x-ingest-secret']), ingest);
      if (ingestDigest) {
        res.locals['credential'] = credentialOf('ingest', ingestDigest);
        setLogActor('platform');
        return next();
      }
      const cronDigest = matchedDigest(header(req.headers['x-cron-secret']), cron);
      const shop = header(req.headers['x-shop'])?.trim();
      // The cron secret is a credential with its shop only (D8): without x-shop, a key sent beside it
      // is the request's credential (each is an alternative of the OpenAPI document's security).
      if (cronDigest && (shop || !BEARER.test(header(req.headers['authorization']) ?? ''))) {
        res.locals['credential'] = credentialOf('cron', cronDigest);
        if (!shop) return next(badRequest('x-shop header required', 'invalid_header'));
        if (shop.length > 255) return next(badRequest('x-shop must be at most 255 characters', 'invalid_header'));
        res.locals['shop'] = shop;
        setLogActor('platform');
        return next();
      }
    }
    const bearer = BEARER.exec(header(req.headers['authorization']) ?? '')?.[1];
    if (bearer === undefined) {
      // The spec's rule 2: with no credential at all and the endpoint's secret not set, the endpoint is closed.
      if (platformAllowed && ingest.length === 0 && cron.length === 0)
        return next(notConfigured(rule.platform === 'cron' ? 'CRON_SECRET' : 'INGEST_SECRET'));
      return next(unauthorized());
    }
    // The cache's answer, a known-invalid key (null) included; only a miss (undefined) asks PostgreSQL.
    const hit = config.keys?.cached(bearer);
    const key = hit !== undefined ? hit : config.keys ? await config.keys.authenticate(bearer) : null;
    if (!key) return next(unauthorized());
    if (rule.scope === null) return next(platformOnly());
    if (!key.scopes.has(rule.scope)) return next(missingScope(rule.scope));
    const xShop = header(req.headers['x-shop'])?.trim();
    if (xShop !== undefined && xShop !== key.shop) return next(forbiddenShop());
    res.locals['credential'] = `key:${key.keyId}`;
    res.locals['principal'] = { actor: key.keyId, key } satisfies Principal;
    res.locals['shop'] = key.shop;
    setLogActor(key.keyId);
    next();
  };
}

/** A per-shop key writes its own shop only: a body `shop` naming another is 403 before it is validated (D28). */
export const ownShop: RequestHandler = (req, res, next) => {
  const keyShop = keyShopOf(res);
  if (keyShop === null) return next();
  const shop = (req.body as Record<string, unknown> | undefined)?.['shop'];
  if (typeof shop === 'string' && shop !== keyShop) return next(forbiddenShop());
  next();
};
