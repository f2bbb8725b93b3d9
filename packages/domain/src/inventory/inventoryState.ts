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

/**
 * D19: a delta request whose idempotency_key was already applied changes nothing; its reply
 * (every line counted as deduped, built by replies.ts) also carries a reuse warning when the
 * payload differs from the first one.
 */
export function dedupedPlan(
  reply: Reply,
  applied: { payload_hash: string },
  command: { payload_hash?: string; idempotency_key?: string },
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
    reply: reused ? { ...reply, body: { ...reply.body, warnings } } : reply,
  };
}
