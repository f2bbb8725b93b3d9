import { isUuid } from '../ids.ts';
import { parseInstant } from '../instant.ts';
import { formatDifference, toDecimal, withinTolerance } from './decimal.ts';
import { KEY_FIELDS, ORDER_LINE_FIELDS, type OrderLine } from './orderLine.ts';

export interface RowProblem {
  row_index: number;
  field: string;
  code: string;
  message: string;
}

const TOLERANCE = toDecimal(0.01)!;
const KNOWN_FIELDS: ReadonlySet<string> = new Set<string>([...KEY_FIELDS, ...ORDER_LINE_FIELDS]);

/**
 * D27: a row field the spec does not define rejects the row (`reject`), never silently dropped.
 * `ignore` is how rows were read before D27: a command appended then carries no `unknown_fields`
 * and is projected (and replayed, D26) as it was.
 */
export type UnknownFields = 'reject' | 'ignore';
// Key fields and the barcode are indexed: bounded so an index row always fits (PostgreSQL ~2.7 kB).
const MAX_KEY_CHARS = 128;

type Parsed = Omit<OrderLine, 'order_line_id' | 'shop' | 'created_at' | 'updated_at'>;

/**
 * The row rules of endpoint 6 and D20: every problem of the row is listed, each with its field and
 * code; the amount identities are exact within an inclusive 0.01 (D20a). Registry and product
 * checks need state and are made by the decider.
 */
export interface ValidatedRow {
  line: Parsed | null;
  errors: RowProblem[];
  /** Well-formed registry ids, even when the row has other problems: the decider checks them too (D20). */
  ids: { channel_id?: string; location_id?: string };
}

export function validateRow(raw: unknown, rowIndex: number, unknownFields: UnknownFields = 'reject'): ValidatedRow {
  const errors: RowProblem[] = [];
  const fail = (field: string, code: string, message: string) => errors.push({ row_index: rowIndex, field, code, message });
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    fail('', 'invalid_type', 'row must be an object');
    return { line: null, errors, ids: {} };
  }
  const r = raw as Record<string, unknown>;
  const present = (f: string) => r[f] !== undefined && r[f] !== null;

  const text = (f: string, maxChars = 1000): string | undefined => {
    if (!present(f) || r[f] === '') return void fail(f, 'required', `${f} is required`);
    if (typeof r[f] !== 'string') return void fail(f, 'invalid_type', `${f} must be a string`);
    if (r[f].length > maxChars) return void fail(f, 'invalid_value', `${f} must be at most ${maxChars} characters`);
    return r[f];
  };
  const optionalText = (f: string): string | null | undefined => {
    if (!present(f)) return null;
    if (typeof r[f] !== 'string') return void fail(f, 'invalid_type', `${f} must be a string or null`);
    return r[f];
  };
  const amount = (f: string): number | undefined => {
    if (!present(f)) return void fail(f, 'required', `${f} is required`);
    if (typeof r[f] !== 'number' || !Number.isFinite(r[f])) return void fail(f, 'invalid_type', `${f} must be a number`);
    return r[f];
  };
  const instant = (f: string, required: boolean): string | null | undefined => {
    if (!present(f)) return required ? void fail(f, 'required', `${f} is required`) : null;
    if (typeof r[f] !== 'string') return void fail(f, 'invalid_type', `${f} must be an ISO 8601 date-time string`);
    const at = parseInstant(r[f]);
    if (at === null) return void fail(f, 'invalid_value', `${f} must be an ISO 8601 date-time with a time zone, in years 1 to 9999`);
    return at;
  };
  const uuid = (f: string): string | undefined => {
    const v = text(f);
    if (v === undefined) return undefined;
    if (!isUuid(v)) return void fail(f, 'invalid_value', `${f} must be a uuid`);
    return v.toLowerCase();
  };

  const source_system = text('source_system', MAX_KEY_CHARS);
  const transaction_id = text('transaction_id', MAX_KEY_CHARS);
  const transaction_line_id = text('transaction_line_id', MAX_KEY_CHARS);
  let line_instance_no: number | undefined;
  if (!present('line_instance_no')) fail('line_instance_no', 'required', 'line_instance_no is required');
  else if (typeof r['line_instance_no'] !== 'number') fail('line_instance_no', 'invalid_type', 'line_instance_no must be an integer');
  else if (!Number.isInteger(r['line_instance_no']) || r['line_instance_no'] < 1 || r['line_instance_no'] > 2147483647)
    fail('line_instance_no', 'invalid_value', 'line_instance_no must be an integer >= 1');
  else line_instance_no = r['line_instance_no'];
  const barcode = text('barcode', MAX_KEY_CHARS);
  const ordered_at = instant('ordered_at', true);
  const currency = text('currency');
  let is_test: boolean | undefined;
  if (!present('is_test')) fail('is_test', 'required', 'is_test is required');
  else if (typeof r['is_test'] !== 'boolean') fail('is_test', 'invalid_type', 'is_test must be a boolean');
  else is_test = r['is_test'];
  const channel_id = uuid('channel_id');
  const location_id = uuid('location_id');
  const customer_id = optionalText('customer_id');
  const gross = amount('gross_amount_taxincl');
  const discount = amount('discount_amount_taxincl');
  const netIncl = amount('net_amount_taxincl');
  const netExcl = amount('net_amount_taxexcl');
  const tax = amount('tax_amount');
  const taxRate = amount('tax_rate');
  const refund = amount('refund_amount');
  const refunded_at = instant('refunded_at', false);
  const refund_reason = optionalText('refund_reason');

  const d = (n: number | undefined) => (n === undefined ? null : toDecimal(n));
  const [dg, dd, dni, dne, dt] = [d(gross), d(discount), d(netIncl), d(netExcl), d(tax)];
  if (dg && dd && dni && !withinTolerance(dg, dd, dni, TOLERANCE))
    fail(
      'net_amount_taxincl',
      'amount_mismatch',
      `gross_amount_taxincl - discount_amount_taxincl = ${formatDifference(gross!, discount!)} differs from net_amount_taxincl ${netIncl} by more than 0.01`,
    );
  if (dni && dt && dne && !withinTolerance(dni, dt, dne, TOLERANCE))
    fail(
      'net_amount_taxexcl',
      'tax_mismatch',
      `net_amount_taxincl - tax_amount = ${formatDifference(netIncl!, tax!)} differs from net_amount_taxexcl ${netExcl} by more than 0.01`,
    );
  if (taxRate !== undefined && (taxRate < 0 || taxRate > 1))
    fail('tax_rate', 'tax_rate_out_of_range', `tax_rate ${taxRate} is outside [0, 1]`);
  if (refund !== undefined && refund < 0) fail('refund_amount', 'refund_amount_negative', `refund_amount ${refund} is negative`);
  if (unknownFields === 'reject') for (const f of Object.keys(r)) if (!KNOWN_FIELDS.has(f)) fail(f, 'unknown_field', `${f} is not allowed`);

  const ids = { ...(channel_id ? { channel_id } : {}), ...(location_id ? { location_id } : {}) };
  if (errors.length) return { line: null, errors, ids };
  return {
    line: {
      source_system: source_system!,
      transaction_id: transaction_id!,
      transaction_line_id: transaction_line_id!,
      line_instance_no: line_instance_no!,
      barcode: barcode!,
      ordered_at: ordered_at!,
      currency: currency!,
      is_test: is_test!,
      channel_id: channel_id!,
      location_id: location_id!,
      customer_id: customer_id ?? null,
      gross_amount_taxincl: gross!,
      discount_amount_taxincl: discount!,
      net_amount_taxincl: netIncl!,
      net_amount_taxexcl: netExcl!,
      tax_amount: tax!,
      tax_rate: taxRate!,
      refund_amount: refund!,
      refunded_at: refunded_at ?? null,
      refund_reason: refund_reason ?? null,
    },
    errors,
    ids,
  };
}
