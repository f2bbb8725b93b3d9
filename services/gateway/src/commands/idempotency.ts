import { createHash } from 'node:crypto';
import type { Request, Response } from 'express';
import type { Pool } from '@ingest/db';
import { ApiError, badRequest } from '../errors/catalog.ts';
import { sendReply } from '../errors/reply.ts';

/**
 * The `Idempotency-Key` header (draft-ietf-httpapi-idempotency-key-header) on every POST.
 * State lives in PostgreSQL (agent_runtime.request_keys), so every gateway instance sees it.
 */

export const IDEMPOTENCY_HEADER = 'idempotency-key';
/** Beyond the reply timeout, how long a first request may be in flight before a retry takes it over. */
export const LEASE_MARGIN_MS = 30_000;

/** Who and where a key belongs to: a key never matches another credential's or another shop's. */
export interface KeyScope {
  credential: string;
  shop: string;
  key: string;
}

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

/** JSON with every object's keys sorted: the same document, however a client serialised it. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    return `{${Object.keys(o)
      .sort()
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

export interface KeyedCommand {
  command_id: string;
  shop: string;
  kind: string;
  received_at: string;
}

/**
 * Records the key with its command id and the command's request row in one statement, before the
 * append; true when this request owns the key. A row past the TTL that the pruner has not reached
 * yet is taken over as if absent.
 */
export async function claimKey(
  pool: Pool,
  scope: KeyScope,
  fingerprint: string,
  command: KeyedCommand,
  leaseMs: number,
  ttlMs: number,
): Promise<boolean> {
  const { rows } = await pool.query<{ command_id: string }>(
    `WITH k AS (
       INSERT INTO agent_runtime.request_keys (credential, shop, key, fingerprint, command_id, received_at, lease_until)
       VALUES ($1, $2, $3, $4, $5, $6, now() + $7 * interval '1 millisecond')
       ON CONFLICT (credential, shop, key) DO UPDATE
          SET fingerprint = EXCLUDED.fingerprint, command_id = EXCLUDED.command_id, received_at = EXCLUDED.received_at,
              lease_until = EXCLUDED.lease_until, answered = false, created_at = now()
        WHERE request_keys.created_at < now() - $8 * interval '1 millisecond'
       RETURNING command_id),
     r AS (
       INSERT INTO agent_runtime.command_requests (command_id, shop, kind, received_at)
       SELECT command_id, $2, $9, $6 FROM k ON CONFLICT DO NOTHING)
     SELECT command_id FROM k`,
    [scope.credential, scope.shop, scope.key, fingerprint, command.command_id, command.received_at, leaseMs, ttlMs, command.kind],
  );
  return rows.length === 1;
}

export interface StoredKey {
  fingerprint: string;
  command_id: string;
  received_at: string;
  answered: boolean;
  /** The first request's lease has run out (it crashed, or its gateway is gone). */
  lapsed: boolean;
  /** Seconds until the lease runs out. */
  wait_s: number;
}

export async function readKey(pool: Pool, scope: KeyScope, ttlMs: number): Promise<StoredKey | null> {
  const { rows } = await pool.query<Omit<StoredKey, 'received_at'> & { received_ms: number }>(
    `SELECT fingerprint, command_id, (extract(epoch FROM received_at) * 1000)::float8 AS received_ms, answered, lease_until <= now() AS lapsed,
            GREATEST(1, ceil(extract(epoch FROM lease_until - now())))::int AS wait_s
       FROM agent_runtime.request_keys
      WHERE credential = $1 AND shop = $2 AND key = $3 AND created_at >= now() - $4 * interval '1 millisecond'`,
    [scope.credential, scope.shop, scope.key, ttlMs],
  );
  const row = rows[0];
  if (!row) return null;
  const { received_ms, ...rest } = row;
  return { ...rest, received_at: new Date(Math.round(received_ms)).toISOString() };
}

/** After the lease: this request carries the same command on; false when another retry got there first. */
export async function takeOverKey(pool: Pool, scope: KeyScope, commandId: string, leaseMs: number): Promise<boolean> {
  const r = await pool.query(
    `UPDATE agent_runtime.request_keys SET lease_until = now() + $5 * interval '1 millisecond'
      WHERE credential = $1 AND shop = $2 AND key = $3 AND command_id = $4 AND NOT answered AND lease_until <= now()`,
    [scope.credential, scope.shop, scope.key, commandId, leaseMs],
  );
  return r.rowCount === 1;
}

/** A 202 was given: a retry answers it again (or the result, once known) instead of 409. */
export async function markAnswered(pool: Pool, scope: KeyScope, commandId: string): Promise<void> {
  await pool.query(
    'UPDATE agent_runtime.request_keys SET answered = true WHERE credential = $1 AND shop = $2 AND key = $3 AND command_id = $4',
    [scope.credential, scope.shop, scope.key, commandId],
  );
}

/** The command was certainly not appended (or its result says send it again): the key is free again. */
export async function releaseKey(pool: Pool, scope: KeyScope, commandId: string): Promise<void> {
  await pool.query('DELETE FROM agent_runtime.request_keys WHERE credential = $1 AND shop = $2 AND key = $3 AND command_id = $4', [
    scope.credential,
    scope.shop,
    scope.key,
    commandId,
  ]);
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
