import type { OutboxEvent } from '../events.ts';
import { logId } from '../ids.ts';
import type { InventoryMeta } from './inventoryCommand.ts';
import { levelKey, QTY_FIELDS, quantities, type Level, type Quantities } from './level.ts';
import { stockEvent, type InventoryChangeType, type StockEventKind } from './outcome.ts';

export interface InventoryLog {
  log_id: string;
  shop: string;
  product_id: string;
  location_id: string;
  barcode: string;
  change_type: InventoryChangeType;
  change_source: string;
  before_data: Quantities | null;
  after_data: Quantities;
  changed_fields: string[];
  idempotency_key: string | null;
  inventory_as_of: string;
  command_id: string;
  /** Order of the record within its command. */
  log_seq: number;
  created_at: string;
}

export interface WriteResult {
  created: boolean;
  changed: boolean;
  /** The stock event this write emitted, if any (D18). */
  stockEvent: StockEventKind | null;
}

/**
 * The levels a command reads and writes, applied line by line in request order (D6a): each write
 * sees the previous ones. It turns writes into the final rows, the update logs of changed lines,
 * and stock_zero / stock_restored events with their per-level seq (D18).
 */
export class LevelBook {
  private readonly current: Map<string, Level>;
  private readonly touched = new Set<string>();
  readonly logs: InventoryLog[] = [];
  readonly events: OutboxEvent[] = [];
  private readonly command: InventoryMeta;
  private nextLog: number;

  constructor(levels: ReadonlyMap<string, Level>, command: InventoryMeta, firstLogIndex = 0) {
    this.current = new Map(levels);
    this.command = command;
    this.nextLog = firstLogIndex;
  }

  get(productId: string, locationId: string): Level | undefined {
    return this.current.get(levelKey(productId, locationId));
  }

  write(
    target: { product_id: string; location_id: string; barcode: string },
    next: Quantities,
    changeType: InventoryChangeType,
    opts: { absolute: boolean },
  ): WriteResult {
    const c = this.command;
    const key = levelKey(target.product_id, target.location_id);
    const before = this.current.get(key);
    const changedFields = before ? QTY_FIELDS.filter((f) => before[f] !== next[f]) : [...QTY_FIELDS];
    const changed = changedFields.length > 0;
    const after: Level = {
      shop: c.shop,
      product_id: target.product_id,
      location_id: target.location_id,
      barcode: target.barcode,
      ...next,
      last_absolute_as_of: opts.absolute ? c.inventory_as_of : (before?.last_absolute_as_of ?? null),
      stock_event_seq: before?.stock_event_seq ?? 0,
      created_at: before?.created_at ?? c.received_at,
      updated_at: changed ? c.received_at : (before?.updated_at ?? c.received_at),
    };

    let event: WriteResult['stockEvent'] = null;
    if (before && before.available_qty > 0 && next.available_qty === 0) event = 'stock_zero';
    // "Back" above 0: only a level whose last event was a stock_zero is restored; one that was
    // created at 0 and never in stock emits nothing when it first gets stock (D18).
    if (before && before.available_qty === 0 && next.available_qty > 0 && before.stock_event_seq > 0) event = 'stock_restored';
    if (event) after.stock_event_seq += 1;

    this.current.set(key, after);
    // A no-op absolute rewrite still moves last_absolute_as_of forward, so the row is written.
    if (changed || opts.absolute) this.touched.add(key);
    if (changed) {
      this.logs.push({
        log_seq: this.nextLog,
        log_id: logId(c.command_id, this.nextLog++),
        shop: c.shop,
        product_id: target.product_id,
        location_id: target.location_id,
        barcode: target.barcode,
        change_type: changeType,
        change_source: c.source_system,
        before_data: before ? quantities(before) : null,
        after_data: quantities(after),
        changed_fields: changedFields,
        idempotency_key: c.idempotency_key ?? null,
        inventory_as_of: c.inventory_as_of,
        command_id: c.command_id,
        created_at: c.received_at,
      });
    }
    if (event && before)
      this.events.push(
        stockEvent(c, event, changeType, {
          product_id: after.product_id,
          location_id: after.location_id,
          barcode: after.barcode,
          previous_available_qty: before.available_qty,
          available_qty: after.available_qty,
          on_hand_qty: after.on_hand_qty,
          seq: after.stock_event_seq,
        }),
      );
    return { created: !before, changed, stockEvent: event };
  }

  /** Final state of every level the command wrote, one per (product, location). */
  rows(): Level[] {
    return [...this.touched].map((k) => this.current.get(k) as Level);
  }
}
