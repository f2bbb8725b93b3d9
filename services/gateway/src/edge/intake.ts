// How a write gets in, cheapest refusal first (docs/api.md "Errors", "Admission"): the front door
// every write route shares (intake: credentials, declared size, body deadline, the in-flight budget,
// the body, the shop's budgets), the in-flight budget itself (D13), and, while some shop is being
// refused, the early refusal of its small bodies before the app (shedShop).
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { Request, RequestHandler, Response } from 'express';
import { ApiError, sendError, SAFE_HEADERS, tooManyRequests } from '../errors/catalog.ts';
import { countRequest, type GatewayMetrics } from '../metrics.ts';
import { ownShop, requireAccess, type AccessConfig, type AccessRule } from './auth.ts';
import { parseJsonObject } from './body.ts';
import { cutRequest } from './cut.ts';
import { chooseRequestId } from './requestContext.ts';
import type { ShopAdmission } from './shopAdmission.ts';

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

// --- The in-flight budget (D13) ---

/** The part of the in-flight budget one connection may hold (docs/api.md#admission): a quarter. */
export const PER_CONNECTION_SHARE = 4;

export type InflightLimiter = RequestHandler & {
  /** Body bytes received by requests not yet answered. */
  current(): number;
  /** The most one connection may hold: MAX_INFLIGHT_BYTES / 4, so no single client holds it all. */
  perConnectionBytes: number;
  /** The handler would refuse this request at once (before reading its body), e.g. the backlog is over its bound. */
  refusesAtOnce(req: IncomingMessage): boolean;
};

const TOO_MANY = 'too many requests in flight; retry later';

/**
 * Overload bound (D13): bursts are absorbed until the body bytes of requests in flight, or the
 * projector's backlog of commands, pass their limits; then 429 with Retry-After.
 *
 * So that no client can hold the budget against everyone, it counts the bytes actually
 * received (chunked bodies included), not what a client declares, from the first byte until the
 * answer; a request whose declared body cannot fit beside what others hold is refused before it is
 * read; a body that pushes the total over the limit while it arrives is cut with 429; and one
 * connection never holds more than its share (pipelined requests on it count together; a single
 * body over the share can never be admitted, so the routes' body limit is capped at the share).
 */
export function inflightLimiter(maxBytes: number, backlog: { lag(): number | null; max: number } | null = null): InflightLimiter {
  const perConnection = Math.max(1, Math.floor(maxBytes / PER_CONNECTION_SHARE));
  let current = 0;
  const held = new WeakMap<object, number>();
  /** The refusal due before a byte of the body is read, if any. */
  const atOnce = (req: IncomingMessage): ApiError | null => {
    const lag = backlog?.lag();
    if (backlog && lag !== null && lag !== undefined && lag > backlog.max)
      return tooManyRequests(`projection backlog of ${lag} commands; retry later`, 5);
    const declared = Number(req.headers['content-length'] ?? 0) || 0;
    if (current > 0 && current + declared > maxBytes) return tooManyRequests(TOO_MANY, 1);
    const onConnection = held.get(req.socket) ?? 0;
    if (onConnection > 0 && onConnection + declared > perConnection) return tooManyRequests(TOO_MANY, 1);
    return null;
  };
  const handler: RequestHandler = (req, res, next) => {
    const refusal = atOnce(req);
    if (refusal) return next(refusal);
    const connection = req.socket;

    let charged = 0;
    let released = false;
    const onData = (chunk: Buffer): void => {
      if (released || res.headersSent) return;
      charged += chunk.length;
      current += chunk.length;
      const mine = (held.get(connection) ?? 0) + chunk.length;
      held.set(connection, mine);
      if (charged > perConnection)
        cutRequest(req, res, new ApiError(413, 'body_too_large', { ok: false, error: 'request body too large' }));
      else if (mine > perConnection || current > maxBytes) cutRequest(req, res, tooManyRequests(TOO_MANY, 1));
    };
    const release = (): void => {
      if (released) return;
      released = true;
      req.off('data', onData);
      current -= charged;
      const left = (held.get(connection) ?? 0) - charged;
      if (left > 0) held.set(connection, left);
      else held.delete(connection);
    };
    // Listening before the body parser does, in the same tick: it sees every chunk the parser sees.
    req.on('data', onData);
    res.once('finish', release);
    res.once('close', release);
    next();
  };
  return Object.assign(handler, {
    current: () => current,
    perConnectionBytes: perConnection,
    refusesAtOnce: (req: IncomingMessage) => atOnce(req) !== null,
  });
}

// --- Shedding an over-budget shop before the app ---

/** The write routes whose shop is in the body and whose credential is x-ingest-secret. */
export const SHEDDABLE_PATHS: ReadonlySet<string> = new Set([
  '/api/admin/locations',
  '/api/admin/channels',
  '/api/admin/daily-snapshot',
  '/api/ingest/inventory-snapshot',
  '/api/ingest/inventory-available',
  '/api/inventory-levels/bulk-upsert',
  '/api/order-line-master/bulk-upsert',
  '/api/ingest/products',
]);

/** A body still arriving after this long is handed to the app, whose own deadline (BODY_TIMEOUT) applies. */
const COLLECT_FOR_MS = 1000;
/**
 * Bodies read here are not yet counted in the in-flight budget (D13): only small ones are, and only so
 * many bytes at once; larger bodies go through the app (whose raw-body check refuses them as well).
 */
export const SHED_MAX_BODY_BYTES = 64 * 1024;
const SHED_MAX_COLLECTING_BYTES = 4 * 1024 * 1024;

const PLAIN_JSON = /^application\/json\s*(;\s*charset\s*=\s*"?utf-?8"?\s*)?$/i;

export interface ShedDeps {
  shopAdmission: ShopAdmission;
  admission: InflightLimiter;
  /** requireIngestSecret's check, on the request's headers. */
  authenticated: (headers: IncomingHttpHeaders) => boolean;
  bodyLimitBytes: number;
  metrics: GatewayMetrics;
}

/**
 * Fair admission per shop, cheaply. While some shop is being refused, a request
 * that is plainly a write (POST to a write route, a valid x-ingest-secret, a declared length of at
 * most 64 KiB, plain UTF-8 JSON, no Idempotency-Key, nothing the in-flight budget refuses at once)
 * has its body read here, first of all middleware, and its shop over budget is answered 429 at once:
 * the same answer, headers and metrics as the routes give, without the request's trip through the
 * routers, its log context and its trace span (bench/refusal-cost.ts, in one run: 316 µs of CPU
 * per refusal through the app, 201 here, 99 for Node's bare http server). Anything else, and every body this
 * does not refuse, is handed on unchanged: the bytes read are put back on the request stream
 * (`unshift`, before the stream's end is emitted) and the app reads them as if nothing happened.
 */
export function shedShop(deps: ShedDeps): RequestHandler {
  let collecting = 0;
  const plainWrite = (req: Request): boolean => {
    if (req.method !== 'POST' || !SHEDDABLE_PATHS.has(req.url)) return false;
    const h = req.headers;
    const declared = Number(h['content-length']);
    if (!(declared > 0 && declared <= Math.min(deps.bodyLimitBytes, SHED_MAX_BODY_BYTES))) return false;
    if (collecting + declared > SHED_MAX_COLLECTING_BYTES) return false;
    if (h['transfer-encoding'] !== undefined || h['expect'] !== undefined || h['idempotency-key'] !== undefined) return false;
    const encoding = h['content-encoding'];
    if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity') return false;
    const type = h['content-type'];
    if (type !== undefined && !PLAIN_JSON.test(type)) return false;
    return deps.authenticated(h) && !deps.admission.refusesAtOnce(req);
  };

  const answer = (req: Request, res: Response, refusal: ApiError, started: number): void => {
    res.setHeader('x-request-id', chooseRequestId(req.headers['x-request-id']));
    res.set(SAFE_HEADERS);
    sendError(res, refusal);
    // What the app's `observe` counts: the route's pattern is its path here.
    countRequest(deps.metrics, 'POST', req.url, res.statusCode, started);
    deps.metrics.shed.inc();
  };

  return (req, res, next) => {
    if (!deps.shopAdmission.refusingLately() || !plainWrite(req)) return next();
    const started = performance.now();
    const declared = Number(req.headers['content-length']);
    collecting += declared;
    const chunks: Buffer[] = [];
    let got = 0;
    let done = false;
    const finish = (): void => {
      done = true;
      collecting -= declared;
      clearTimeout(timer);
      req.off('readable', onReadable);
      req.off('close', handOver);
    };
    // Synchronously after the last read: the stream's 'end' is emitted a tick later, and only when
    // nothing is left in it, so the bytes put back are read by the app as the whole body.
    function handOver(): void {
      if (done) return;
      finish();
      if (got > 0) req.unshift(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, got));
      next();
    }
    function onReadable(): void {
      if (done) return;
      for (let c: Buffer | null; (c = req.read() as Buffer | null) !== null;) {
        chunks.push(c);
        got += c.length;
      }
      if (got < declared) return;
      const raw = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, got);
      const refusal = deps.shopAdmission.refusalBeforeParsing(res, raw);
      if (!refusal) return handOver();
      finish();
      // Read to its end: the connection stays open for the client's next request.
      req.resume();
      answer(req, res, refusal, started);
    }
    const timer = setTimeout(handOver, COLLECT_FOR_MS);
    req.on('readable', onReadable);
    req.once('close', handOver);
  };
}
