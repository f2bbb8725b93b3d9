import { STATUS_CODES } from 'node:http';
import type { ErrorRequestHandler, Request, Response } from 'express';
import { classifyDbError } from '@ingest/db';
import type { Logger } from '@ingest/runtime';
import { ERROR_CODE_HEADER, ERROR_CODES, type ErrorCode } from '@ingest/contracts';

export { ERROR_CODE_HEADER, ERROR_CODES, type ErrorCode };

/**
 * The one error catalog (STYLE.md): every error the API returns has a status and a body in the
 * spec's shape. Anything else becomes a plain 500 whose detail goes to the log only.
 */
export class ApiError extends Error {
  readonly status: number;
  /** Its stable code (docs/api.md#error-codes), sent in X-Error-Code. */
  readonly code: ErrorCode;
  readonly body: Record<string, unknown> | string;
  readonly headers: Record<string, string>;
  constructor(status: number, code: ErrorCode, body: Record<string, unknown> | string, headers: Record<string, string> = {}) {
    // An answer, not a fault: no stack trace is captured (7% of the gateway's CPU per 429 when a
    // shop's burst is refused at thousands of requests a second).
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(typeof body === 'string' ? body : typeof body['error'] === 'string' ? body['error'] : String(status));
    Error.stackTraceLimit = limit;
    this.status = status;
    this.code = code;
    this.body = body;
    this.headers = headers;
  }
}

export const unauthorized = (): ApiError => new ApiError(401, 'unauthorized', 'unauthorized');
export const notConfigured = (setting: string): ApiError =>
  new ApiError(503, 'not_configured', { ok: false, error: `${setting} not configured` });
export const badRequest = (error: string, code: ErrorCode = 'invalid_request'): ApiError => new ApiError(400, code, { ok: false, error });
export const unprocessable = (errorKind: 'invalid_payload' | 'location_unresolved' | 'location_ambiguous', error: string): ApiError =>
  new ApiError(422, errorKind, { ok: false, error_kind: errorKind, error });
export const notFound = (error = 'not found'): ApiError => new ApiError(404, 'not_found', { ok: false, error });
export const tooManyRequests = (
  error: string,
  retryAfterSeconds: number,
  code: 'too_many_requests' | 'shop_over_budget' = 'too_many_requests',
  headers: Record<string, string> = {},
): ApiError => new ApiError(429, code, { ok: false, error }, { ...headers, 'Retry-After': String(retryAfterSeconds) });
export const unavailable = (error: string, retryAfterSeconds: number): ApiError =>
  new ApiError(503, 'dependency_unavailable', { ok: false, error }, { 'Retry-After': String(retryAfterSeconds) });

/**
 * On every answer of the API (JSON, the text 401, Node's parser errors): no content
 * sniffing of what echoes client input, and no cache keeps an answer about a client's data.
 */
export const SAFE_HEADERS = { 'X-Content-Type-Options': 'nosniff', 'Cache-Control': 'no-store' } as const;

export function sendError(res: Response, err: ApiError): void {
  res.set(err.headers);
  res.set(ERROR_CODE_HEADER, err.code);
  if (typeof err.body === 'string') res.status(err.status).type('text/plain').send(err.body);
  else res.status(err.status).json(err.body);
}

/** body-parser's errors carry a `type`; map them to D11's statuses. */
function fromBodyParser(err: { type?: string; status?: number; message?: string }): ApiError | null {
  switch (err.type) {
    case 'entity.parse.failed':
      return badRequest('invalid JSON body', 'invalid_json');
    case 'entity.too.large':
      return new ApiError(413, 'body_too_large', { ok: false, error: 'request body too large' });
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new ApiError(415, 'unsupported_encoding', { ok: false, error: 'unsupported content encoding' });
    case 'request.aborted':
      return badRequest('request aborted', 'request_aborted');
    default:
      return null;
  }
}

/**
 * Every other error of the HTTP stack that carries a 4xx status (the router's URI
 * decoding, decompression, raw-body's size checks) is that 4xx in the spec's shape, never a 500.
 * Its message can quote the request, so a fixed text is sent instead.
 */
function fromHttpStack(err: unknown, req: Request): ApiError | null {
  const e = (err ?? {}) as { status?: unknown; statusCode?: unknown; type?: unknown };
  const status = Number(e.status ?? e.statusCode);
  if (!(status >= 400 && status < 500)) return null;
  // The router's decodeURIComponent of a path parameter (`/api/commands/%ZZ`).
  if (err instanceof URIError) return badRequest('malformed URL', 'malformed_url');
  // body-parser passes the zlib/brotli/zstd error on as a 400 without a `type` (raw-body's own carry one).
  const encoding = String(req.headers['content-encoding'] ?? 'identity').toLowerCase();
  if (encoding !== 'identity' && e.type === undefined) return badRequest('invalid compressed body', 'invalid_compressed_body');
  return new ApiError(status, 'client_error', { ok: false, error: (STATUS_CODES[status] ?? 'client error').toLowerCase() });
}

/** How long a client should wait before retrying while a dependency is down. */
export const DEPENDENCY_RETRY_AFTER_S = 5;

/** A dependency's outage is never a 500: 503 with Retry-After, and the client retries. */
function fromDependency(err: unknown): ApiError | null {
  if (classifyDbError(err) === 'permanent') return null;
  return unavailable('database unavailable; retry later', DEPENDENCY_RETRY_AFTER_S);
}

export function errorHandler(log: Logger): ErrorRequestHandler {
  return (err: unknown, req, res, _next) => {
    const known = err instanceof ApiError ? err : (fromBodyParser(err as { type?: string }) ?? fromHttpStack(err, req));
    const dependency = known ? null : fromDependency(err);
    if (dependency) log.warn({ err, route: req.path }, 'dependency unavailable: answered 503');
    const api = known ?? dependency;
    if (api) {
      if (res.headersSent) return;
      sendError(res, api);
      return;
    }
    log.error({ err, route: req.path }, 'unhandled error');
    if (res.headersSent) return;
    res.set(ERROR_CODE_HEADER, 'internal_error').status(500).json({ ok: false, error: 'internal error' });
  };
}

const isCode = (v: unknown): v is ErrorCode => typeof v === 'string' && Object.hasOwn(ERROR_CODES, v);

/** The code of a reply a decider or the projector made (a stored result): its error_kind, else by status. */
export function replyErrorCode(status: number, body: Record<string, unknown>): ErrorCode | null {
  if (status < 400) return null;
  if (isCode(body['error_kind'])) return body['error_kind'];
  if (status === 422) return 'invalid_payload';
  if (status === 400) return 'invalid_request';
  if (status === 503) return 'dependency_unavailable';
  return status >= 500 ? 'internal_error' : 'client_error';
}
