import type { OutboxEvent } from '../events.ts';
import type { Reply } from '../commands.ts';
import type { Level, Quantities } from './level.ts';
import type { InventoryLog } from './levelBook.ts';

/** What the shell loads before an inventory decider runs. */
export interface InventoryState {
  /** The shop's product ids by barcode, for the barcodes the command names. */
  products: ReadonlyMap<string, string>;
  /** The shop's location ids matching each location ref of the command (by locationRefKey). */
  locations: ReadonlyMap<string, readonly string[]>;
  /** Current levels by levelKey(product_id, location_id). */
  levels: ReadonlyMap<string, Level>;
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
  return { levels: [], logs: [], daily: [], events: [], recordKey: null, reply: { status, body: { ok: false, error_kind: errorKind, error } } };
}

/** D19: the warning of a delta request whose key was applied with another payload. */
export function reuseWarnings(appliedHash: string, hash: string, key: string): Array<Record<string, string>> {
  return appliedHash === hash
    ? []
    : [{ code: 'idempotency_key_reused', message: `idempotency_key ${key} was already applied with a different payload; nothing was applied` }];
}
