/**
 * A row of endpoint 6 that passes every rule, as a client sends it (unit and integration tests,
 * the bench): 1,100 - 100 = 1,000 incl. tax; 1,000 - 90.91 = 909.09 excl. tax (D20). `over`
 * replaces fields in place, so the field order stays the order a client would send.
 */
export function validOrderRow(
  refs: { barcode: string; channel_id: string; location_id: string },
  over: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    source_system: 'pos',
    transaction_id: 'T-1',
    transaction_line_id: 'L-1',
    line_instance_no: 1,
    barcode: refs.barcode,
    ordered_at: '2026-05-01T10:00:00+09:00',
    currency: 'JPY',
    is_test: false,
    channel_id: refs.channel_id,
    location_id: refs.location_id,
    customer_id: 'C-1',
    gross_amount_taxincl: 1100,
    discount_amount_taxincl: 100,
    net_amount_taxincl: 1000,
    net_amount_taxexcl: 909.09,
    tax_amount: 90.91,
    tax_rate: 0.1,
    refund_amount: 0,
    refunded_at: null,
    refund_reason: null,
    ...over,
  };
}
