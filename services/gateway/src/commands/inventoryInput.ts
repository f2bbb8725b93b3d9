import { createHash } from 'node:crypto';
import { BUSINESS_TIME, inBusinessTime, parseInstant, type LocationRef } from '@ingest/domain';
import { badRequest, unprocessable } from '../errors/catalog.ts';

const FUTURE_TOLERANCE_MS = 5 * 60 * 1000;

/** D11: both forms -> 422 invalid_payload; neither -> 400. */
export function locationRefOf(
  body: { location_id?: string; location?: { identifier_type: string; identifier_value: string } },
  at = '',
): LocationRef {
  const hasId = body.location_id !== undefined;
  const hasExt = body.location !== undefined;
  if (hasId && hasExt) throw unprocessable('invalid_payload', `${at}location_id and ${at}location are mutually exclusive; send one`);
  if (hasId) return { location_id: body.location_id as string };
  if (hasExt) {
    const l = body.location as { identifier_type: string; identifier_value: string };
    return { location: { identifier_type: l.identifier_type, identifier_value: l.identifier_value } };
  }
  if (at) throw unprocessable('invalid_payload', `${at}location_id or ${at}location required`);
  throw badRequest('location_id or location required');
}

/**
 * The effective time of an inventory write (D3: defaulted here); far future is refused (D15b), and
 * so is a time before the business range (docs/api.md "Value ranges"), with the same 422.
 */
export function inventoryAsOf(value: string | undefined, now: Date): string {
  if (value === undefined) return now.toISOString();
  const at = parseInstant(value);
  if (at === null) throw badRequest('inventory_as_of must be a valid date-time');
  const t = Date.parse(at);
  if (t - now.getTime() > FUTURE_TOLERANCE_MS)
    throw unprocessable('invalid_payload', 'inventory_as_of is more than 5 minutes in the future');
  if (!inBusinessTime(at)) throw unprocessable('invalid_payload', `inventory_as_of is before ${BUSINESS_TIME.from.replace('.000Z', 'Z')}`);
  return at;
}

/**
 * D19: identifies a request's payload, so a reused idempotency_key with other content is reported.
 * Canonical JSON (object keys sorted): the same content in another key order is the same payload.
 */
export function payloadHash(payload: unknown): string {
  return createHash('sha256').update(canonicalJson(payload)).digest('hex');
}

function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v !== null && typeof v === 'object')
    return `{${Object.keys(v)
      .sort()
      .filter((k) => (v as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(v);
}
