import type { OutboxEvent } from '../events.ts';
import type { Reply } from '../commandMeta.ts';
import type { Level, Quantities } from './level.ts';
import type { InventoryLog } from './levelBook.ts';
import { describeRef, type LocationRef } from './location.ts';

/** What the shell loads before an inventory decider runs. */
export interface InventoryState {
  /** The shop's product ids by barcode, for the barcodes the command names. */
  products: ReadonlyMap<string, string>;
  /** The shop's location ids matching each location ref of the command (by locationRefKey). */
  locations: ReadonlyMap<string, readonly string[]>;
  /** Current levels by levelKey(product_id, location_id). */
  levels: ReadonlyMap<string, Level>;
  /**
   * D16b: the stored daily rows of a snapshot's date for the products x location it names, by
   * dailyKey(product_id, location_id, snapshot_date). Empty for the other commands (no daily rows).
   */
  daily: ReadonlyMap<string, DailyRow>;
  /** D19: the stored payload hash when the command's idempotency key was already applied. */
  appliedKey: { payload_hash: string } | null;
}

export interface DailyRow extends Quantities {
  shop: string;
  product_id: string;
  location_id: string;
  snapshot_date: string;
  barcode: string;
  source: 'snapshot' | 'daily_job';
  inventory_as_of: string;
  command_id: string;
}

export interface InventoryPlan {
  levels: Level[];
  logs: InventoryLog[];
  /** Daily rows to write: new ones and changed ones only (D16b). */
  daily: DailyRow[];
  /** stock_zero / stock_restored (D18); audit events for the logs are added by the shell. */
  events: OutboxEvent[];
  /** D19: record this key as applied. */
  recordKey: { idempotency_key: string; payload_hash: string } | null;
  reply: Reply;
}

export interface Unresolved {
  barcode: string;
  location_id?: string;
  reason: 'product_not_found' | 'location_unresolved' | 'location_ambiguous';
}

export interface StaleLine {
  barcode: string;
  location_id: string;
  stored_as_of: string;
}

export function rejected(status: number, errorKind: string, error: string): InventoryPlan {
  return {
    levels: [],
    logs: [],
    daily: [],
    events: [],
    recordKey: null,
    reply: { status, body: { ok: false, error_kind: errorKind, error } },
  };
}

/** D14: a request-level location that does not resolve refuses the whole command. */
export function locationRejection(ref: LocationRef, reason: 'location_unresolved' | 'location_ambiguous'): InventoryPlan {
  return rejected(
    422,
    reason,
    `${describeRef(ref)} ${reason === 'location_ambiguous' ? 'matches several locations' : 'is not a location of this shop'}`,
  );
}

/** What the line loop of endpoints 3 and 5 counts. */
export interface LineTally {
  updated: number;
  unchanged: number;
  unresolved: Unresolved[];
  clamped: unknown[];
  clampedLines: number;
  stale: StaleLine[];
}

export function newTally(): LineTally {
  return { updated: 0, unchanged: 0, unresolved: [], clamped: [], clampedLines: 0, stale: [] };
}

/** The response body of endpoints 3 and 5 (D15a: lines_unchanged, D15b: lines_stale are added fields). */
export function tallyBody(base: Record<string, unknown>, t: LineTally, deduped = 0): Record<string, unknown> {
  return {
    ...base,
    lines_updated: t.updated,
    lines_unchanged: t.unchanged,
    lines_unresolved: t.unresolved.length,
    lines_clamped: t.clampedLines,
    lines_deduped: deduped,
    lines_stale: t.stale.length,
    unresolved: t.unresolved,
    clamped: t.clamped,
    stale: t.stale,
  };
}

/**
 * D19: a delta request whose idempotency_key was already applied changes nothing and counts every
 * line as deduped; with another payload than the first, it also carries a reuse warning.
 */
export function dedupedPlan(
  base: Record<string, unknown>,
  lineCount: number,
  applied: { payload_hash: string },
  command: { payload_hash?: string; idempotency_key?: string },
  extra: Record<string, unknown> = {},
): InventoryPlan {
  const reused = applied.payload_hash !== command.payload_hash;
  const warnings = [
    {
      code: 'idempotency_key_reused',
      message: `idempotency_key ${command.idempotency_key ?? ''} was already applied with a different payload; nothing was applied`,
    },
  ];
  return {
    levels: [],
    logs: [],
    daily: [],
    events: [],
    recordKey: null,
    reply: { status: 200, body: { ...tallyBody(base, newTally(), lineCount), ...extra, ...(reused ? { warnings } : {}) } },
  };
}
