import type { LocationRef } from '@ingest/contracts/types';

/** How a command names a location (spec: Location reference; schemas/commands, exactly one of two). */
export type { LocationRef };

export function locationRefKey(ref: LocationRef): string {
  return 'location_id' in ref ? `id:${ref.location_id}` : `ext:${ref.location.identifier_type}\0${ref.location.identifier_value}`;
}

export type Resolution = { ok: true; location_id: string } | { ok: false; reason: 'location_unresolved' | 'location_ambiguous' };

/**
 * D14: a ref resolves to exactly one of the shop's locations; none -> location_unresolved,
 * several sharing the identifier -> location_ambiguous. `matches` are the shop's location ids
 * that the shell found for the ref.
 */
export function resolveLocation(matches: readonly string[] | undefined): Resolution {
  const unique = [...new Set(matches ?? [])];
  if (unique.length === 1) return { ok: true, location_id: unique[0] as string };
  return { ok: false, reason: unique.length === 0 ? 'location_unresolved' : 'location_ambiguous' };
}

export function describeRef(ref: LocationRef): string {
  return 'location_id' in ref
    ? `location_id ${ref.location_id}`
    : `location ${ref.location.identifier_type}=${ref.location.identifier_value}`;
}
