import type { OrderLineRow } from '@ingest/contracts/types';

/** The fields of an order line a client sends (spec: Order line), in the order logs list them. */
export const ORDER_LINE_FIELDS = [
  'barcode',
  'ordered_at',
  'currency',
  'is_test',
  'channel_id',
  'location_id',
  'customer_id',
  'gross_amount_taxincl',
  'discount_amount_taxincl',
  'net_amount_taxincl',
  'net_amount_taxexcl',
  'tax_amount',
  'tax_rate',
  'refund_amount',
  'refunded_at',
  'refund_reason',
] as const satisfies ReadonlyArray<keyof OrderLineRow>;
export type OrderLineField = (typeof ORDER_LINE_FIELDS)[number];

export const KEY_FIELDS = ['source_system', 'transaction_id', 'transaction_line_id', 'line_instance_no'] as const satisfies ReadonlyArray<
  keyof OrderLineRow
>;

/**
 * A valid order line as stored in public.order_line_master: the row of schemas/http/order-line.json
 * with every optional field present (null when the client left it out), its id, shop and times.
 */
export type OrderLine = { [K in keyof OrderLineRow]-?: Exclude<OrderLineRow[K], undefined> } & {
  order_line_id: string;
  shop: string;
  created_at: string;
  updated_at: string;
};

export function orderLineKey(l: Pick<OrderLine, (typeof KEY_FIELDS)[number]>): string {
  return [l.source_system, l.transaction_id, l.transaction_line_id, String(l.line_instance_no)].join('\0');
}

/** Business fields of a line, as written to before_data / after_data. */
export function orderLineData(l: OrderLine): Record<string, unknown> {
  const data: Record<string, unknown> = { order_line_id: l.order_line_id, shop: l.shop };
  for (const f of KEY_FIELDS) data[f] = l[f];
  for (const f of ORDER_LINE_FIELDS) data[f] = l[f];
  return data;
}
