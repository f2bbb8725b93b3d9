import type { RequestHandler } from 'express';
import { parseJsonObject } from '../edge/body.ts';
import { cutRequest } from '../edge/cut.ts';
import { ApiError } from '../errors/catalog.ts';
import type { ShopAdmission } from '../edge/shopAdmission.ts';
import { ownShop, requireAccess, type AccessConfig, type AccessRule } from '../edge/auth.ts';

/** What every write route shares: one in-flight budget (D13), the body limit (D11) and the body deadline. */
export interface Intake {
  /** Who may write (docs/api.md "Authentication"): the shared secrets and the per-shop keys (D28). */
  access: AccessConfig;
  admission: RequestHandler;
  bodyLimitBytes: number;
  /** How long a body may take to arrive once its request is admitted (BODY_TIMEOUT). */
  bodyTimeoutMs: number;
  /** Per-shop budgets, checked once the shop is known: on the raw body when it is certain there, else once parsed. */
  shopAdmission?: ShopAdmission;
}

/**
 * The front door of every write route, cheapest refusal first (docs/api.md "Errors"): credentials
 * (and a per-shop key's scope and x-shop) and the other header checks of `rule`, then the declared size, then the body deadline and the
 * in-flight budget, then the body, then the shop's own budgets (on the raw body when its shop is
 * certain there, else once it is parsed), all before the route records or appends anything. An
 * unauthenticated or oversized request is answered without ever holding budget, so one hostile
 * connection cannot make everyone else's requests 429.
 */
export function intake(rule: AccessRule, deps: Intake): RequestHandler[] {
  return [
    requireAccess(deps.access, rule),
    declaredSizeWithin(deps.bodyLimitBytes),
    bodyDeadline(deps.bodyTimeoutMs),
    deps.admission,
    ...parseJsonObject(deps.bodyLimitBytes, deps.shopAdmission?.refusalBeforeParsing),
    ownShop,
    ...(deps.shopAdmission ? [deps.shopAdmission] : []),
  ];
}

/**
 * A body that has not arrived within `ms` is cut with 408: a client trickling bytes
 * holds a connection (and what it sent of the budget) for a bounded time only.
 */
export function bodyDeadline(ms: number): RequestHandler {
  return (req, res, next) => {
    const timer = setTimeout(() => {
      if (!req.complete) cutRequest(req, res, new ApiError(408, 'body_timeout', { ok: false, error: 'request body timeout' }));
    }, ms).unref();
    const clear = (): void => clearTimeout(timer);
    req.once('end', clear);
    res.once('finish', clear);
    res.once('close', clear);
    next();
  };
}

/**
 * A declared Content-Length over the body limit is 413 at once (D11), before a byte is read:
 * body-parser would read the whole declared body off the socket before answering. The compressed
 * size counts here, the inflated one in body-parser.
 */
export function declaredSizeWithin(limitBytes: number): RequestHandler {
  return (req, res, next) => {
    const declared = Number(req.headers['content-length'] ?? 0);
    if (!(declared > limitBytes)) return next();
    // The body stays unread: close the connection after the answer rather than drain gigabytes.
    res.set('Connection', 'close');
    next(new ApiError(413, 'body_too_large', { ok: false, error: 'request body too large' }));
  };
}
