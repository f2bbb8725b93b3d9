import { describe, expect, it } from 'vitest';
import { validOrderRow } from '../../testing/orderRow.ts';
import { validateRow, type RowProblem } from './validateRow.ts';

// The row rules of endpoint 6 (spec: Order line, Row validation) with the codes of D20 and the
// exact, inclusive 0.01 tolerance of D20a. Registry and product checks need state: they are in
// decideOrderLines.unit.test.ts.

const CH = '0190a000-0000-7000-8000-0000000000c1';
const LOC = '0190a000-0000-7000-8000-0000000000a1';

/** A row that passes every rule: 1,100 - 100 = 1,000 incl. tax; 1,000 - 90.91 = 909.09 excl. tax. */
function row(over: Record<string, unknown> = {}): Record<string, unknown> {
  return validOrderRow({ barcode: '4900000000001', channel_id: CH, location_id: LOC }, over);
}

function without(field: string, r = row()): Record<string, unknown> {
  const copy = { ...r };
  delete copy[field];
  return copy;
}

/** Amounts only: gross - discount vs net incl. tax, with a zero tax so the tax identity holds. */
const amounts = (gross: number, discount: number, net: number) =>
  row({
    gross_amount_taxincl: gross,
    discount_amount_taxincl: discount,
    net_amount_taxincl: net,
    tax_amount: 0,
    net_amount_taxexcl: net,
    tax_rate: 0,
  });

/** Tax only: net incl. - tax vs net excl. tax. */
const taxes = (netIncl: number, tax: number, netExcl: number) =>
  row({
    gross_amount_taxincl: netIncl,
    discount_amount_taxincl: 0,
    net_amount_taxincl: netIncl,
    tax_amount: tax,
    net_amount_taxexcl: netExcl,
  });

const codes = (errors: RowProblem[]) => errors.map((e) => [e.field, e.code]);

const REQUIRED = [
  'source_system',
  'transaction_id',
  'transaction_line_id',
  'line_instance_no',
  'barcode',
  'ordered_at',
  'currency',
  'is_test',
  'channel_id',
  'location_id',
  'gross_amount_taxincl',
  'discount_amount_taxincl',
  'net_amount_taxincl',
  'net_amount_taxexcl',
  'tax_amount',
  'tax_rate',
  'refund_amount',
] as const;

describe('validateRow (endpoint 6, D20)', () => {
  it('given a row that meets every rule, when validated, then it is accepted with its values, the time in UTC and ids lower-cased', () => {
    const { line, errors } = validateRow(row({ channel_id: CH.toUpperCase() }), 0);
    expect(errors).toEqual([]);
    expect(line).toEqual({
      source_system: 'pos',
      transaction_id: 'T-1',
      transaction_line_id: 'L-1',
      line_instance_no: 1,
      barcode: '4900000000001',
      ordered_at: '2026-05-01T01:00:00.000Z',
      currency: 'JPY',
      is_test: false,
      channel_id: CH,
      location_id: LOC,
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
    });
  });

  it('given the optional fields omitted, when validated, then customer_id, refunded_at and refund_reason are null', () => {
    const r = without('refund_reason', without('refunded_at', without('customer_id')));
    const { line, errors } = validateRow(r, 0);
    expect(errors).toEqual([]);
    expect(line).toMatchObject({ customer_id: null, refunded_at: null, refund_reason: null });
  });

  describe('required', () => {
    it.each(REQUIRED)('given a row without %s, when validated, then it is rejected with code required on that field', (field) => {
      const { line, errors } = validateRow(without(field), 7);
      expect(line).toBeNull();
      expect(errors).toEqual([{ row_index: 7, field, code: 'required', message: expect.any(String) }]);
    });

    it('given a required field sent as null, when validated, then it is required', () => {
      expect(codes(validateRow(row({ barcode: null }), 0).errors)).toEqual([['barcode', 'required']]);
      expect(codes(validateRow(row({ tax_rate: null }), 0).errors)).toEqual([['tax_rate', 'required']]);
      expect(codes(validateRow(row({ is_test: null }), 0).errors)).toEqual([['is_test', 'required']]);
    });

    it('given a required string sent empty, when validated, then it is required', () => {
      expect(codes(validateRow(row({ transaction_id: '' }), 0).errors)).toEqual([['transaction_id', 'required']]);
    });
  });

  describe('invalid_type', () => {
    it.each([
      ['source_system', 42],
      ['barcode', 4900000000001],
      ['line_instance_no', '1'],
      ['is_test', 'false'],
      ['gross_amount_taxincl', '1100'],
      ['tax_rate', '0.1'],
      ['refund_amount', true],
      ['customer_id', 12345],
      ['ordered_at', 1714525200000],
      ['refunded_at', false],
      ['refund_reason', { text: 'x' }],
      ['channel_id', 1],
    ] as const)('given %s of the wrong type (%j), when validated, then invalid_type on that field', (field, value) => {
      const { line, errors } = validateRow(row({ [field]: value }), 3);
      expect(line).toBeNull();
      expect(errors).toEqual([{ row_index: 3, field, code: 'invalid_type', message: expect.any(String) }]);
    });

    it('given a row that is not an object, when validated, then one invalid_type error for the row', () => {
      for (const raw of [null, 'row', 5, [row()]]) {
        const { line, errors } = validateRow(raw, 2);
        expect(line).toBeNull();
        expect(errors).toHaveLength(1);
        expect(errors[0]).toMatchObject({ row_index: 2, code: 'invalid_type' });
      }
    });
  });

  describe('invalid_value', () => {
    it.each([0, -1, 1.5])('given line_instance_no %s, when validated, then invalid_value (spec: integer >= 1)', (n) => {
      expect(validateRow(row({ line_instance_no: n }), 0).errors).toEqual([
        { row_index: 0, field: 'line_instance_no', code: 'invalid_value', message: expect.any(String) },
      ]);
    });

    it('given line_instance_no 1, when validated, then it passes (the lower bound is inclusive)', () => {
      expect(validateRow(row({ line_instance_no: 1 }), 0).errors).toEqual([]);
    });

    it.each(['yesterday', '2026-13-01T00:00:00Z', '2026-05-01T25:00:00Z', '01/05/2026 10:00'])(
      'given ordered_at %j, when validated, then invalid_value (bad datetime)',
      (value) => {
        expect(validateRow(row({ ordered_at: value }), 0).errors).toEqual([
          { row_index: 0, field: 'ordered_at', code: 'invalid_value', message: expect.any(String) },
        ]);
      },
    );

    it('given refunded_at that is not a datetime, when validated, then invalid_value on refunded_at', () => {
      expect(codes(validateRow(row({ refunded_at: 'soon' }), 0).errors)).toEqual([['refunded_at', 'invalid_value']]);
    });

    it.each(['2026-02-30T00:00:00Z', '2026-04-31T12:00:00Z', '2026-02-29T00:00:00Z'])(
      'given ordered_at %s, a calendar day that does not exist, when validated, then invalid_value (bad datetime)',
      (value) => {
        expect(codes(validateRow(row({ ordered_at: value }), 0).errors)).toEqual([['ordered_at', 'invalid_value']]);
      },
    );

    it('given a channel_id or location_id that is not a uuid, when validated, then invalid_value on that field', () => {
      expect(codes(validateRow(row({ channel_id: 'web' }), 0).errors)).toEqual([['channel_id', 'invalid_value']]);
      expect(codes(validateRow(row({ location_id: 'store-1' }), 0).errors)).toEqual([['location_id', 'invalid_value']]);
    });
  });

  describe('amount_mismatch (gross - discount vs net incl. tax, D20a)', () => {
    it.each([
      [100.0, 0.0, 99.99],
      [100.0, 0.0, 100.01],
      [100.0, 0.0, 100.0],
      [0.3, 0.1, 0.2],
      [0.3, 0.1, 0.19],
      [100.01, 0, 100],
      [1.005, 0, 0.995],
      [1100, 100, 1000],
      [0.07, 0.01, 0.05],
    ])('given gross %s, discount %s and net %s (within 0.01 inclusive), when validated, then it passes', (g, d, n) => {
      expect(validateRow(amounts(g, d, n), 0).errors).toEqual([]);
    });

    it.each([
      [100.0, 0.0, 99.98],
      [100.0, 0.0, 100.02],
      [100.0, 0.0, 99.989],
      [0.3, 0.1, 0.18],
      [0.3, 0.1, 0.22],
      [1100, 100, 1100],
    ])(
      'given gross %s, discount %s and net %s (off by more than 0.01), when validated, then amount_mismatch on net_amount_taxincl',
      (g, d, n) => {
        expect(validateRow(amounts(g, d, n), 4).errors).toEqual([
          { row_index: 4, field: 'net_amount_taxincl', code: 'amount_mismatch', message: expect.any(String) },
        ]);
      },
    );
  });

  describe('tax_mismatch (net incl. - tax vs net excl. tax, D20a)', () => {
    it.each([
      [1000, 90.91, 909.09],
      [1000, 90.91, 909.08],
      [1000, 90.91, 909.1],
      [100.0, 0.0, 99.99],
      [0.3, 0.1, 0.2],
      [100.01, 0, 100],
    ])('given net incl. %s, tax %s and net excl. %s (within 0.01 inclusive), when validated, then it passes', (ni, t, ne) => {
      expect(validateRow(taxes(ni, t, ne), 0).errors).toEqual([]);
    });

    it.each([
      [1000, 90.91, 909.07],
      [1000, 90.91, 909.11],
      [100.0, 0.0, 99.98],
      [0.3, 0.1, 0.18],
    ])(
      'given net incl. %s, tax %s and net excl. %s (off by more than 0.01), when validated, then tax_mismatch on net_amount_taxexcl',
      (ni, t, ne) => {
        expect(validateRow(taxes(ni, t, ne), 1).errors).toEqual([
          { row_index: 1, field: 'net_amount_taxexcl', code: 'tax_mismatch', message: expect.any(String) },
        ]);
      },
    );
  });

  describe('tax_rate_out_of_range', () => {
    it.each([0, 1, 0.1, 0.08])('given tax_rate %s, when validated, then it passes ([0, 1] inclusive)', (rate) => {
      expect(validateRow(row({ tax_rate: rate }), 0).errors).toEqual([]);
    });

    it.each([-0.01, 1.01, 10, -1])('given tax_rate %s, when validated, then tax_rate_out_of_range', (rate) => {
      expect(validateRow(row({ tax_rate: rate }), 2).errors).toEqual([
        { row_index: 2, field: 'tax_rate', code: 'tax_rate_out_of_range', message: expect.any(String) },
      ]);
    });
  });

  describe('refund_amount_negative', () => {
    it.each([-0.01, -100])('given refund_amount %s, when validated, then refund_amount_negative', (refund) => {
      expect(validateRow(row({ refund_amount: refund }), 5).errors).toEqual([
        { row_index: 5, field: 'refund_amount', code: 'refund_amount_negative', message: expect.any(String) },
      ]);
    });

    it.each([0, 0.01, 1100])('given refund_amount %s, when validated, then it passes (>= 0)', (refund) => {
      expect(validateRow(row({ refund_amount: refund }), 0).errors).toEqual([]);
    });
  });

  describe('several problems on one row', () => {
    it('given a row with many problems, when validated, then each is listed with the row index', () => {
      const r = without(
        'barcode',
        row({ line_instance_no: 0, is_test: 'no', tax_rate: 1.5, refund_amount: -1, gross_amount_taxincl: 2000, net_amount_taxexcl: 1 }),
      );
      const { line, errors } = validateRow(r, 9);
      expect(line).toBeNull();
      expect(errors.every((e) => e.row_index === 9 && typeof e.message === 'string' && e.message.length > 0)).toBe(true);
      expect(codes(errors)).toEqual(
        expect.arrayContaining([
          ['line_instance_no', 'invalid_value'],
          ['barcode', 'required'],
          ['is_test', 'invalid_type'],
          ['net_amount_taxincl', 'amount_mismatch'],
          ['net_amount_taxexcl', 'tax_mismatch'],
          ['tax_rate', 'tax_rate_out_of_range'],
          ['refund_amount', 'refund_amount_negative'],
        ]),
      );
      expect(errors).toHaveLength(7);
    });
  });

  describe('D27: unknown fields', () => {
    it('given a row with a field the spec does not define, when validated, then the row is rejected with unknown_field naming it', () => {
      const { line, errors } = validateRow(row({ quantity: 2 }), 4);
      expect(line).toBeNull();
      expect(errors).toEqual([{ row_index: 4, field: 'quantity', code: 'unknown_field', message: 'quantity is not allowed' }]);
    });

    it('given several unknown fields and a bad value, when validated, then each is listed', () => {
      const { errors } = validateRow(row({ quantity: 2, tax_rate: 2, note: null }), 0);
      expect(codes(errors)).toEqual([
        ['tax_rate', 'tax_rate_out_of_range'],
        ['quantity', 'unknown_field'],
        ['note', 'unknown_field'],
      ]);
    });

    it('given a valid row, when validated, then no field of the spec is unknown', () => {
      expect(validateRow(row(), 0).errors).toEqual([]);
    });

    it('given a command appended before D27 (unknown_fields ignore), when validated, then an unknown field is ignored as it was', () => {
      const { line, errors } = validateRow(row({ quantity: 2 }), 0, 'ignore');
      expect(errors).toEqual([]);
      expect(line).not.toHaveProperty('quantity');
    });
  });
});
