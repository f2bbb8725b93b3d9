import type { DailyRow } from './inventoryState.ts';
import { QTY_FIELDS } from './level.ts';

export function dailyKey(productId: string, locationId: string, snapshotDate: string): string {
  return `${productId}|${locationId}|${snapshotDate}`;
}

/** D16b: what a daily row says about the day; its inventory_as_of and command_id only name who first said it. */
export function sameDailyValues(a: DailyRow, b: DailyRow): boolean {
  return a.source === b.source && QTY_FIELDS.every((f) => a[f] === b[f]);
}

/**
 * The daily rows a snapshot reads and writes, line by line in request order (D6a). A row is
 * (re)written only when it is new or its quantities or source differ from the current one (D16b):
 * a resend, or a later snapshot of the day with the same values, leaves the stored row as it is.
 */
export class DailyBook {
  private readonly current: Map<string, DailyRow>;
  private readonly touched = new Set<string>();

  constructor(stored: ReadonlyMap<string, DailyRow>) {
    this.current = new Map(stored);
  }

  /** Answers whether the row is written. */
  write(next: DailyRow): boolean {
    const key = dailyKey(next.product_id, next.location_id, next.snapshot_date);
    const before = this.current.get(key);
    if (before && sameDailyValues(before, next)) return false;
    this.current.set(key, next);
    this.touched.add(key);
    return true;
  }

  /** Final state of every daily row the command wrote, one per (product, location, date). */
  rows(): DailyRow[] {
    return [...this.touched].map((k) => this.current.get(k) as DailyRow);
  }
}
