import { productId } from '../src/ids.ts';
import type { InventoryMeta } from '../src/inventory/inventoryCommand.ts';
import { dailyKey } from '../src/inventory/dailyBook.ts';
import { levelKey, type Level, type Quantities } from '../src/inventory/level.ts';
import type { DailyRow, InventoryState } from '../src/inventory/inventoryState.ts';
import { locationRefKey } from '../src/inventory/location.ts';

// Shared givens for the inventory decider tests.
export const SHOP = 'shop.example';
export const LOC = '01900000-0000-7000-8000-00000000000a';
export const LOC2 = '01900000-0000-7000-8000-00000000000b';
export const T0 = '2026-11-01T00:00:00.000Z';
export const T1 = '2026-11-02T00:00:00.000Z';
/** Earlier on the business day of T1 (05:00 on 2026-11-02 in Asia/Tokyo; T1 is 09:00). */
export const T_EARLY = '2026-11-01T20:00:00.000Z';
/** The command that wrote the stored daily rows of the givens (meta() is ...0001). */
export const C_FIRST = '01900000-0000-7000-8000-000000000000';
export const PA = productId(SHOP, 'A');
export const PB = productId(SHOP, 'B');

export function meta(over: Partial<InventoryMeta> = {}): InventoryMeta {
  return {
    command_id: '01900000-0000-7000-8000-000000000001',
    shop: SHOP,
    received_at: T1,
    source: { endpoint: '/test' },
    actor: 'platform',
    source_system: 'pos',
    inventory_as_of: T1,
    payload_hash: 'h1',
    ...over,
  };
}

export function level(productIdValue: string, barcode: string, q: Partial<Quantities> = {}, over: Partial<Level> = {}): Level {
  return {
    shop: SHOP,
    product_id: productIdValue,
    location_id: LOC,
    barcode,
    on_hand_qty: 0,
    available_qty: 0,
    allocated_qty: 0,
    reserved_qty: 0,
    incoming_qty: 0,
    ...q,
    last_absolute_as_of: T0,
    stock_event_seq: 0,
    created_at: T0,
    updated_at: T0,
    ...over,
  };
}

export function state(levels: Level[] = [], over: Partial<InventoryState> = {}): InventoryState {
  return {
    products: new Map([
      ['A', PA],
      ['B', PB],
    ]),
    locations: new Map([
      [locationRefKey({ location_id: LOC }), [LOC]],
      [locationRefKey({ location_id: LOC2 }), [LOC2]],
      [locationRefKey({ location: { identifier_type: 'pos', identifier_value: 'S1' } }), [LOC]],
      [locationRefKey({ location: { identifier_type: 'pos', identifier_value: 'DUP' } }), [LOC, LOC2]],
    ]),
    levels: new Map(levels.map((l) => [levelKey(l.product_id, l.location_id), l])),
    daily: new Map(),
    appliedKey: null,
    ...over,
  };
}

/** A stored daily row of 2026-11-02, written by C_FIRST at T_EARLY unless told otherwise. */
export function dailyRow(productIdValue: string, barcode: string, q: Partial<Quantities> = {}, over: Partial<DailyRow> = {}): DailyRow {
  return {
    shop: SHOP,
    product_id: productIdValue,
    location_id: LOC,
    snapshot_date: '2026-11-02',
    barcode,
    on_hand_qty: 0,
    available_qty: 0,
    allocated_qty: 0,
    reserved_qty: 0,
    incoming_qty: 0,
    ...q,
    source: 'snapshot',
    inventory_as_of: T_EARLY,
    command_id: C_FIRST,
    ...over,
  };
}

/** The stored daily rows of a state, keyed as the shell loads them (D16b). */
export function storedDaily(rows: DailyRow[]): Map<string, DailyRow> {
  return new Map(rows.map((r) => [dailyKey(r.product_id, r.location_id, r.snapshot_date), r]));
}
