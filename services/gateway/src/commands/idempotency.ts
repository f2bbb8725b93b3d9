import { createHash } from 'node:crypto';
import type { Request, Response } from 'express';
import type { requestKeys } from '@ingest/db';
import { ApiError, badRequest } from '../errors/catalog.ts';
import { sendReply } from './replies.ts';

/**
 * The `Idempotency-Key` header (draft-ietf-httpapi-idempotency-key-header) on every POST.
 * State lives in PostgreSQL (the ledger's requestKeys), so every gateway instance sees it.
 */

export const IDEMPOTENCY_HEADER = 'idempotency-key';
/** Beyond the reply timeout, how long a first request may be in flight before a retry takes it over. */
export const LEASE_MARGIN_MS = 30_000;

/** Who and where a key belongs to: a key never matches another credential's or another shop's. */
export type KeyScope = requestKeys.KeyScope;

/**
 * The header's key, null when absent; 400 when malformed: empty, over 255 characters, or not
 * printable ASCII. The draft's form is a structured-field string (`"abc"`); a bare token is taken
 * as it is, as most APIs do.
 */
export function idempotencyKeyOf(req: Request): string | null {
  const raw = req.headers[IDEMPOTENCY_HEADER];
  if (raw === undefined) return null;
  let key = Array.isArray(raw) ? raw.join(', ') : raw;
  if (key.length >= 2 && key.startsWith('"') && key.endsWith('"')) key = key.slice(1, -1).replace(/\\(["\\])/g, '$1');
  if (key.length === 0) throw badRequest('Idempotency-Key must not be empty', 'invalid_header');
  if (key.length > 255) throw badRequest('Idempotency-Key must be at most 255 characters', 'invalid_header');
  if (!/^[\x20-\x7e]+$/.test(key)) throw badRequest('Idempotency-Key must be printable ASCII', 'invalid_header');
  return key;
}

/**
 * JSON with every object's keys sorted and its undefined members left out, as JSON.stringify does:
 * the same document however a client serialised it. Both the request fingerprint and D19's
 * payload hash are stored, so this must not change what it returns for a given document.
 */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    return `{${Object.keys(o)
      .sort()
      .filter((k) => o[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * The request's fingerprint: method, path with its query, the credential, the shop, and a sha256
 * of the body's canonical JSON (sorted keys, no whitespace). Canonical JSON rather than the raw
 * bytes: a client that serialises its retry again (another key order, other spacing, another
 * charset) sends the same request, and the gateway keeps no copy of the raw bytes.
 */
export function fingerprintOf(req: Request, scope: KeyScope): string {
  let body: string;
  try {
    body = canonicalJson(req.body);
  } catch (err) {
    if (err instanceof RangeError) throw badRequest('invalid JSON body: nested too deeply', 'invalid_json');
    throw err;
  }
  const h = createHash('sha256');
  for (const part of [req.method, req.originalUrl, scope.credential, scope.shop]) h.update(part).update('\0');
  return h.update(body).digest('hex');
}

export const mismatch = (): ApiError =>
  new ApiError(422, 'idempotency_key_reused', {
    ok: false,
    error_kind: 'idempotency_key_reused',
    error: 'Idempotency-Key was already used for a different request',
  });

export const inFlight = (retryAfterSeconds: number): ApiError =>
  new ApiError(
    409,
    'idempotency_key_in_flight',
    { ok: false, error: 'a request with this Idempotency-Key is still in flight; retry later' },
    { 'Retry-After': String(retryAfterSeconds) },
  );

/** A stored answer, as it was, marked as a replay. */
export function replay(res: Response, status: number, body: Record<string, unknown>): void {
  res.set('Idempotent-Replayed', 'true');
  if (status === 503) res.set('Retry-After', '5');
  sendReply(res, status, body);
}

/**
 * D19: identifies a request's payload, so a reused idempotency_key with other content is reported.
 * Canonical JSON (object keys sorted): the same content in another key order is the same payload.
 */
export function payloadHash(payload: unknown): string {
  return createHash('sha256').update(canonicalJson(payload)).digest('hex');
}
