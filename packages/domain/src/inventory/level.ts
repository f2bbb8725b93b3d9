/** The five quantities of a stock level, in a stable order (logs list changed fields in this order). */
export const QTY_FIELDS = ['on_hand_qty', 'available_qty', 'allocated_qty', 'reserved_qty', 'incoming_qty'] as const;
export type QtyField = (typeof QTY_FIELDS)[number];
export type Quantities = Record<QtyField, number>;

/** A row of sot.inventory_levels as the deciders see it. */
export interface Level extends Quantities {
  shop: string;
  product_id: string;
  location_id: string;
  barcode: string;
  /** D15b: as-of of the last absolute write; null when only deltas ever touched it. */
  last_absolute_as_of: string | null;
  /** D18: the seq of the last stock event of this level. */
  stock_event_seq: number;
  created_at: string;
  updated_at: string;
}

/**
 * The largest quantity a level stores (docs/api.md "Value ranges"). Inputs are bounded (schemas: at
 * most 1e12), but deltas add up; past 2^53 - 1 JavaScript would round the sum, and past bigint's range
 * PostgreSQL would refuse it. A delta result above it is stored as it and reported in `clamped`, like
 * one below 0.
 */
export const QTY_MAX = Number.MAX_SAFE_INTEGER;

/** A computed quantity as stored: within 0..QTY_MAX (D17 clamps below 0, QTY_MAX above). */
export function clampQty(computed: number): number {
  return Math.min(QTY_MAX, Math.max(0, computed));
}

export const ZERO: Quantities = { on_hand_qty: 0, available_qty: 0, allocated_qty: 0, reserved_qty: 0, incoming_qty: 0 };

export function levelKey(productId: string, locationId: string): string {
  return `${productId}|${locationId}`;
}

export function quantities(l: Quantities): Quantities {
  return {
    on_hand_qty: l.on_hand_qty,
    available_qty: l.available_qty,
    allocated_qty: l.allocated_qty,
    reserved_qty: l.reserved_qty,
    incoming_qty: l.incoming_qty,
  };
}

/** Compares ISO-8601 instants (any offset) by the time they denote. */
export function isBefore(a: string, b: string): boolean {
  return Date.parse(a) < Date.parse(b);
}
