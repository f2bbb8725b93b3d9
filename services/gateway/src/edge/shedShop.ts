import type { IncomingHttpHeaders } from 'node:http';
import type { Request, RequestHandler, Response } from 'express';
import { sendError, SAFE_HEADERS, type ApiError } from '../errors/catalog.ts';
import { countRequest, type GatewayMetrics } from '../metrics.ts';
import type { InflightLimiter } from './inflight.ts';
import { chooseRequestId } from './requestContext.ts';
import type { ShopAdmission } from './shopAdmission.ts';

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
