import { v5 as uuidv5 } from 'uuid';

// Fixed namespaces: internal ids are derived, never drawn (D3), so a replay yields the same ids.
const PRODUCT_NS = '5b0f3c2e-8d7a-4c1e-9f3b-2a6d4e8c1b70';
const LOG_NS = '9c1d7e4a-3b2f-4a6e-8d5c-7f0e1a2b3c4d';
const EVENT_NS = 'e3a9f1c7-6d2b-4e8a-9b5f-1c7d3e9a2f6b';
const ORDER_LINE_NS = '2d7c4b1a-8e3f-4a5b-9c6d-0e1f2a3b4c5d';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A canonical UUID text (the form a PostgreSQL uuid column and our ids use). */
export function isUuid(value: string): boolean {
  return UUID.test(value);
}

export function productId(shop: string, barcode: string): string {
  return uuidv5(`${shop}\0${barcode}`, PRODUCT_NS);
}

/** An order line's id derives from its unique key (D3). */
export function orderLineId(shop: string, key: string): string {
  return uuidv5(`${shop}\0${key}`, ORDER_LINE_NS);
}

/** The n-th log record written by a command. */
export function logId(commandId: string, n: number): string {
  return uuidv5(`${commandId}\0${n}`, LOG_NS);
}

/** Event ids derive from (command_id, kind, key) (D3), so a consumer can dedupe redeliveries. */
export function eventId(commandId: string, kind: string, key: string): string {
  return uuidv5(`${commandId}\0${kind}\0${key}`, EVENT_NS);
}
