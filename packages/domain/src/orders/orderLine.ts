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
] as const;
export type OrderLineField = (typeof ORDER_LINE_FIELDS)[number];

export const KEY_FIELDS = ['source_system', 'transaction_id', 'transaction_line_id', 'line_instance_no'] as const;

/** A valid order line as stored in public.order_line_master. */
export interface OrderLine {
  order_line_id: string;
  shop: string;
  source_system: string;
  transaction_id: string;
  transaction_line_id: string;
  line_instance_no: number;
  barcode: string;
  ordered_at: string;
  currency: string;
  is_test: boolean;
  channel_id: string;
  location_id: string;
  customer_id: string | null;
  gross_amount_taxincl: number;
  discount_amount_taxincl: number;
  net_amount_taxincl: number;
  net_amount_taxexcl: number;
  tax_amount: number;
  tax_rate: number;
  refund_amount: number;
  refunded_at: string | null;
  refund_reason: string | null;
  created_at: string;
  updated_at: string;
}

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
