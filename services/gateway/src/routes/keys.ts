import { Router, type RequestHandler } from 'express';
import type { SchemaRegistry } from '@ingest/contracts';
import type { CreateApiKeyRequest } from '@ingest/contracts/types';
import type { KeyService } from '@ingest/access';
import { requireAccess, type AccessConfig } from '../edge/auth.ts';
import { parseJsonObject } from '../edge/body.ts';
import { badRequest, notConfigured, notFound } from '../errors/catalog.ts';
import { NUL_REFUSED } from './operatorQuery.ts';

const KEY_ID = /^key_[0-9a-f]{16}$/;

/**
 * D28: the platform credential mints, lists and revokes per-shop keys. A minted key is in the 201
 * answer only (never stored, logged or listed: `Cache-Control: no-store` keeps it out of caches
 * too); a revocation is effective on every gateway within a second (the `api_keys` notification).
 */
export function keyRoutes(deps: { access: AccessConfig; schemas: SchemaRegistry }): Router {
  const router = Router();
  const body = deps.schemas.validator<CreateApiKeyRequest>('http/admin-keys.request.json');
  const platform = requireAccess(deps.access, { platform: 'ingest', scope: null, retailer: false });
  const keys: RequestHandler = (_req, res, next) => {
    if (!deps.access.keys) return next(notConfigured('API_KEY_PEPPER'));
    res.set('Cache-Control', 'no-store');
    next();
  };
  const service = (): KeyService => deps.access.keys!;
  // The same JSON rules as every body (D11), with a limit that fits a key request.
  const json = parseJsonObject(16 * 1024);

  router.post('/api/admin/keys', platform, keys, ...json, async (req, res) => {
    const b = body(req.body);
    if (!b.ok) throw badRequest(b.failure.message);
    const created = await service().create(b.value);
    res.status(201).json({ ok: true, ...created });
  });

  router.get('/api/admin/keys', platform, keys, async (req, res) => {
    const shop = req.query['shop'];
    // Characters as a body's `shop` counts them (code points), and no NUL, which PostgreSQL text cannot hold.
    if (shop !== undefined && (typeof shop !== 'string' || shop.length === 0 || [...shop].length > 255))
      throw badRequest('shop must be one shop, 1 to 255 characters');
    if (shop?.includes('\u0000')) throw badRequest(NUL_REFUSED('shop'));
    res.json({ ok: true, keys: await service().list(shop ?? null) });
  });

  router.delete('/api/admin/keys/:key_id', platform, keys, async (req, res) => {
    const keyId = String(req.params['key_id']);
    const revoked = KEY_ID.test(keyId) ? await service().revoke(keyId) : null;
    if (!revoked) throw notFound('key not found');
    res.json({ ok: true, key_id: revoked.key_id, shop: revoked.shop, revoked_at: revoked.revoked_at });
  });

  return router;
}
