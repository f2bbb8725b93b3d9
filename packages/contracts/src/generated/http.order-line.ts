// Generated from schemas/http/order-line.json by scripts/gen-types.ts. Do not edit.

/**
 * One row of POST /api/order-line-master/bulk-upsert (spec: Order line). The gateway does not refuse a request for a bad row: the projector checks each row (packages/domain validateRow, D20) and reports it in `errors` with a code; this schema documents the row those checks accept.
 */
export interface OrderLineRow {
  /**
   * Originating external system (key).
   */
  source_system: string;
  /**
   * Transaction (order) id (key).
   */
  transaction_id: string;
  /**
   * Transaction line id (key).
   */
  transaction_line_id: string;
  /**
   * The sold unit within the line, 1 to N (key).
   */
  line_instance_no: number;
  /**
   * Product barcode; a barcode not in the product master is stored with a warning.
   */
  barcode: string;
  /**
   * Order time (ISO 8601 with offset).
   */
  ordered_at: string;
  /**
   * Currency code.
   */
  currency: string;
  /**
   * Test-order flag.
   */
  is_test: boolean;
  /**
   * A channel of the shop (D14); unknown -> row error channel_not_found.
   */
  channel_id: string;
  /**
   * A location of the shop (D14); unknown -> row error location_not_found.
   */
  location_id: string;
  /**
   * External customer identifier.
   */
  customer_id?: string | null;
  /**
   * Gross amount incl. tax, before discount.
   */
  gross_amount_taxincl: number;
  /**
   * Discount incl. tax; gross - discount = net incl. tax within 0.01 (D20a).
   */
  discount_amount_taxincl: number;
  /**
   * Net amount incl. tax.
   */
  net_amount_taxincl: number;
  /**
   * Net amount excl. tax; net incl. - tax = net excl. within 0.01 (D20a).
   */
  net_amount_taxexcl: number;
  /**
   * Tax amount.
   */
  tax_amount: number;
  /**
   * 0 to 1 (10 percent is 0.10).
   */
  tax_rate: number;
  /**
   * Refund amount, >= 0.
   */
  refund_amount: number;
  /**
   * Refund time.
   */
  refunded_at?: string | null;
  /**
   * Refund reason.
   */
  refund_reason?: string | null;
}
