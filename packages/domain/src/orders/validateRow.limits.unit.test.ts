import { describe, expect, it } from 'vitest';
import { validOrderRow } from '../../testing/orderRow.ts';
import { validateRow } from './validateRow.ts';

// Endpoint 6 row rules at their edges: the stored column limits (key fields and barcode are indexed,
// so at most 128 characters; other text at most 1,000; line_instance_no is a PostgreSQL integer)
// and the exact text of each problem, which the response lists in `errors` (D20).

const CH = '0190a000-0000-7000-8000-0000000000c1';
const LOC = '0190a000-0000-7000-8000-0000000000a1';
const row = (over: Record<string, unknown> = {}) => validOrderRow({ barcode: '4900000000001', channel_id: CH, location_id: LOC }, over);
const errorsOf = (over: Record<string, unknown>) => validateRow(row(over), 0).errors;

describe('validateRow: column limits', () => {
  it.each(['source_system', 'transaction_id', 'transaction_line_id', 'barcode'])(
    '%s: 128 characters are stored, 129 are invalid_value naming the limit (an index row must fit)',
    (field) => {
      expect(errorsOf({ [field]: 'x'.repeat(128) })).toEqual([]);
      expect(errorsOf({ [field]: 'x'.repeat(129) })).toEqual([
        { row_index: 0, field, code: 'invalid_value', message: `${field} must be at most 128 characters` },
      ]);
    },
  );

  it('currency: 1,000 characters are stored, 1,001 are invalid_value', () => {
    expect(errorsOf({ currency: 'J'.repeat(1000) })).toEqual([]);
    expect(errorsOf({ currency: 'J'.repeat(1001) })).toEqual([
      { row_index: 0, field: 'currency', code: 'invalid_value', message: 'currency must be at most 1000 characters' },
    ]);
  });

  it('line_instance_no: up to 2,147,483,647 (int4); one more is invalid_value', () => {
    expect(errorsOf({ line_instance_no: 2_147_483_647 })).toEqual([]);
    expect(errorsOf({ line_instance_no: 2_147_483_648 })).toEqual([
      // Its text names the lower bound only, so the text is not pinned here.
      {
        row_index: 0,
        field: 'line_instance_no',
        code: 'invalid_value',
        message: expect.stringMatching(/^line_instance_no must be an integer/),
      },
    ]);
  });
});

describe('validateRow: the message of each problem (D20)', () => {
  const problem = (over: Record<string, unknown>) => errorsOf(over).map((e) => [e.field, e.code, e.message]);

  it('a row that is not an object: one invalid_type for the whole row, with no field', () => {
    expect(validateRow('row', 4).errors).toEqual([{ row_index: 4, field: '', code: 'invalid_type', message: 'row must be an object' }]);
  });

  it('required fields', () => {
    expect(problem({ transaction_id: null })).toEqual([['transaction_id', 'required', 'transaction_id is required']]);
    expect(problem({ line_instance_no: null })).toEqual([['line_instance_no', 'required', 'line_instance_no is required']]);
    expect(problem({ is_test: null })).toEqual([['is_test', 'required', 'is_test is required']]);
    expect(problem({ tax_amount: null, net_amount_taxexcl: 1000 })).toEqual([['tax_amount', 'required', 'tax_amount is required']]);
    expect(problem({ ordered_at: null })).toEqual([['ordered_at', 'required', 'ordered_at is required']]);
  });

  it('values of the wrong type', () => {
    expect(problem({ source_system: 42 })).toEqual([['source_system', 'invalid_type', 'source_system must be a string']]);
    expect(problem({ customer_id: 7 })).toEqual([['customer_id', 'invalid_type', 'customer_id must be a string or null']]);
    expect(problem({ refund_amount: '0' })).toEqual([['refund_amount', 'invalid_type', 'refund_amount must be a number']]);
    expect(problem({ line_instance_no: '1' })).toEqual([['line_instance_no', 'invalid_type', 'line_instance_no must be an integer']]);
    expect(problem({ is_test: 'no' })).toEqual([['is_test', 'invalid_type', 'is_test must be a boolean']]);
    expect(problem({ ordered_at: 1714525200000 })).toEqual([
      ['ordered_at', 'invalid_type', 'ordered_at must be an ISO 8601 date-time string'],
    ]);
  });

  it('values out of their domain', () => {
    expect(problem({ refunded_at: 'soon' })).toEqual([
      ['refunded_at', 'invalid_value', 'refunded_at must be an ISO 8601 date-time with a time zone, in years 1 to 9999'],
    ]);
    expect(problem({ channel_id: 'web' })).toEqual([['channel_id', 'invalid_value', 'channel_id must be a uuid']]);
    expect(problem({ channel_id: `urn:uuid:${CH}` })).toEqual([['channel_id', 'invalid_value', 'channel_id must be a uuid']]);
  });

  it('amount_mismatch prints the computed difference exactly, negative or written with an exponent (D20a)', () => {
    const amounts = (gross: number, discount: number, net: number) =>
      problem({
        gross_amount_taxincl: gross,
        discount_amount_taxincl: discount,
        net_amount_taxincl: net,
        tax_amount: 0,
        net_amount_taxexcl: net,
        tax_rate: 0,
      });
    expect(amounts(0.05, 0.1, 0)).toEqual([
      [
        'net_amount_taxincl',
        'amount_mismatch',
        'gross_amount_taxincl - discount_amount_taxincl = -0.05 differs from net_amount_taxincl 0 by more than 0.01',
      ],
    ]);
    expect(amounts(0.02, 1e-7, 0)).toEqual([
      [
        'net_amount_taxincl',
        'amount_mismatch',
        'gross_amount_taxincl - discount_amount_taxincl = 0.0199999 differs from net_amount_taxincl 0 by more than 0.01',
      ],
    ]);
    expect(amounts(0.01, 1e-7, 0)).toEqual([]);
  });

  it('tax_mismatch prints net incl. - tax the same way', () => {
    expect(problem({ tax_amount: 90.91, net_amount_taxexcl: 900 })).toEqual([
      [
        'net_amount_taxexcl',
        'tax_mismatch',
        'net_amount_taxincl - tax_amount = 909.09 differs from net_amount_taxexcl 900 by more than 0.01',
      ],
    ]);
  });

  it('tax_rate and refund_amount name the value', () => {
    expect(problem({ tax_rate: 1.5 })).toEqual([['tax_rate', 'tax_rate_out_of_range', 'tax_rate 1.5 is outside [0, 1]']]);
    expect(problem({ refund_amount: -1 })).toEqual([['refund_amount', 'refund_amount_negative', 'refund_amount -1 is negative']]);
  });
});
