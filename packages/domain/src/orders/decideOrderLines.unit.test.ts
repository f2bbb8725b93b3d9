import { describe, expect, it } from 'vitest';
import { validOrderRow } from '../../testing/orderRow.ts';
import { logId, orderLineId } from '../ids.ts';
import { decideOrderLines, type OrderLinesState, type OrderLinesUpsertCommand } from './decideOrderLines.ts';
import { KEY_FIELDS, ORDER_LINE_FIELDS, orderLineData, orderLineKey, type OrderLine } from './orderLine.ts';

// Endpoint 6 decided without I/O: the registry and product checks (spec rules 5 and 6), the
// upsert by key with its logs (D21), in-order batches (D6a) and the dry run (D22).

const SHOP = 'shop.example';
const CH = '0190a000-0000-7000-8000-0000000000c1';
const LOC = '0190a000-0000-7000-8000-0000000000a1';
const OTHER = '0190a000-0000-7000-8000-0000000000ff';
const KNOWN = '4900000000001';
const T0 = '2026-11-01T00:00:00.000Z';
const T1 = '2026-11-02T00:00:00.000Z';
const CMD = '01900000-0000-7000-8000-000000000001';
const VERSION = '9.8.7';

function row(over: Record<string, unknown> = {}): Record<string, unknown> {
  return validOrderRow({ barcode: KNOWN, channel_id: CH, location_id: LOC }, { ordered_at: '2026-10-31T10:00:00.000Z', ...over });
}

/** The stored form of row(over), as the store loads it. */
function stored(over: Record<string, unknown> = {}): OrderLine {
  const r = row(over) as unknown as Omit<OrderLine, 'order_line_id' | 'shop' | 'created_at' | 'updated_at'>;
  return { ...r, order_line_id: orderLineId(SHOP, orderLineKey(r)), shop: SHOP, created_at: T0, updated_at: T0 };
}

function state(lines: OrderLine[] = [], over: Partial<OrderLinesState> = {}): OrderLinesState {
  return {
    lines: new Map(lines.map((l) => [orderLineKey(l), l])),
    channels: new Set([CH]),
    locations: new Set([LOC]),
    barcodes: new Set([KNOWN]),
    ...over,
  };
}

function command(rows: unknown[], over: Partial<OrderLinesUpsertCommand['payload']> = {}): OrderLinesUpsertCommand {
  return {
    kind: 'order_lines.upsert',
    command_id: CMD,
    shop: SHOP,
    received_at: T1,
    source: { endpoint: '/api/order-line-master/bulk-upsert' },
    actor: 'platform',
    payload: {
      rows,
      dry_run: false,
      change_source: 'external_app',
      ingest_run_id: null,
      idempotency_key: null,
      changed_by_user_id: null,
      ...over,
    },
  };
}

const decide = (s: OrderLinesState, rows: unknown[], over: Partial<OrderLinesUpsertCommand['payload']> = {}) =>
  decideOrderLines(s, command(rows, over), VERSION);

describe('decideOrderLines (endpoint 6)', () => {
  it('given no stored line, when a valid row arrives, then it is inserted with a derived id and logged insert with every field', () => {
    const plan = decide(state(), [row()]);
    expect(plan.reply).toEqual({
      status: 200,
      body: {
        ok: true,
        dry_run: false,
        accepted_rows: 1,
        inserted_rows: 1,
        updated_rows: 0,
        rejected_rows: 0,
        warnings_count: 0,
        errors: [],
        warnings: [],
        adapter_version: VERSION,
      },
    });
    const id = orderLineId(SHOP, orderLineKey(stored()));
    expect(plan.upserts).toEqual([{ ...stored(), order_line_id: id, created_at: T1, updated_at: T1 }]);
    expect(plan.logs).toHaveLength(1);
    expect(plan.logs[0]).toEqual({
      log_id: logId(CMD, 0),
      shop: SHOP,
      order_line_id: id,
      source_system: 'pos',
      transaction_id: 'T-1',
      transaction_line_id: 'L-1',
      line_instance_no: 1,
      change_type: 'insert',
      before_data: null,
      after_data: orderLineData({ ...stored(), created_at: T1, updated_at: T1 }),
      changed_fields: [...KEY_FIELDS, ...ORDER_LINE_FIELDS],
      change_source: 'external_app',
      ingest_run_id: null,
      idempotency_key: null,
      changed_by_user_id: null,
      command_id: CMD,
      log_seq: 0,
      created_at: T1,
    });
  });

  it('given a stored line, when the identical row is resent, then it is accepted but neither inserted nor updated, and nothing is written (D21)', () => {
    const plan = decide(state([stored()]), [row()]);
    expect(plan.reply.body).toMatchObject({ accepted_rows: 1, inserted_rows: 0, updated_rows: 0, rejected_rows: 0 });
    expect(plan.upserts).toEqual([]);
    expect(plan.logs).toEqual([]);
  });

  it('given a stored line, when the same instant is sent in another offset, then it is identical (no-op)', () => {
    const plan = decide(state([stored()]), [row({ ordered_at: '2026-10-31T19:00:00+09:00' })]);
    expect(plan.reply.body).toMatchObject({ accepted_rows: 1, inserted_rows: 0, updated_rows: 0 });
    expect(plan.logs).toEqual([]);
  });

  it('given a stored line, when customer_id changes, then it is updated and logged update with before, after and changed_fields [customer_id]', () => {
    const plan = decide(state([stored()]), [row({ customer_id: 'C-2' })], {
      change_source: 'pos-sync',
      ingest_run_id: 'run-7',
      idempotency_key: 'key-7',
      changed_by_user_id: '0190a000-0000-7000-8000-0000000000e1',
    });
    expect(plan.reply.body).toMatchObject({ accepted_rows: 1, inserted_rows: 0, updated_rows: 1 });
    expect(plan.upserts).toEqual([{ ...stored({ customer_id: 'C-2' }), created_at: T0, updated_at: T1 }]);
    expect(plan.logs).toHaveLength(1);
    expect(plan.logs[0]).toMatchObject({
      change_type: 'update',
      changed_fields: ['customer_id'],
      before_data: orderLineData(stored()),
      after_data: orderLineData({ ...stored({ customer_id: 'C-2' }), updated_at: T1 }),
      change_source: 'pos-sync',
      ingest_run_id: 'run-7',
      idempotency_key: 'key-7',
      changed_by_user_id: '0190a000-0000-7000-8000-0000000000e1',
    });
  });

  it('given a stored line, when refund_amount is raised, then the change is a refund (D21)', () => {
    const plan = decide(state([stored()]), [row({ refund_amount: 1000 })]);
    expect(plan.reply.body).toMatchObject({ updated_rows: 1 });
    expect(plan.logs.map((l) => [l.change_type, l.changed_fields])).toEqual([['refund', ['refund_amount']]]);
  });

  it('given a stored line without refunded_at, when refunded_at is set, then the change is a refund (D21)', () => {
    const plan = decide(state([stored()]), [row({ refunded_at: '2026-11-01T12:00:00.000Z', refund_reason: 'damaged' })]);
    expect(plan.logs.map((l) => [l.change_type, l.changed_fields])).toEqual([['refund', ['refunded_at', 'refund_reason']]]);
  });

  it('given a refunded line, when refund_amount is lowered or refunded_at moved, then the change is an update, not a refund (D21)', () => {
    const refunded = stored({ refund_amount: 500, refunded_at: '2026-11-01T12:00:00.000Z' });
    const lower = decide(state([refunded]), [row({ refund_amount: 400, refunded_at: '2026-11-01T12:00:00.000Z' })]);
    expect(lower.logs.map((l) => l.change_type)).toEqual(['update']);
    const moved = decide(state([refunded]), [row({ refund_amount: 500, refunded_at: '2026-11-01T13:00:00.000Z' })]);
    expect(moved.logs.map((l) => l.change_type)).toEqual(['update']);
  });

  it('given a key repeated in one batch, when decided, then it is inserted, then updated, then a no-op, counted and logged in order (D6a)', () => {
    const plan = decide(state(), [row(), row({ customer_id: 'C-2' }), row({ customer_id: 'C-2' })]);
    expect(plan.reply.body).toMatchObject({ accepted_rows: 3, inserted_rows: 1, updated_rows: 1, rejected_rows: 0 });
    expect(plan.logs.map((l) => [l.change_type, l.log_seq, l.changed_fields.length])).toEqual([
      ['insert', 0, KEY_FIELDS.length + ORDER_LINE_FIELDS.length],
      ['update', 1, 1],
    ]);
    expect(plan.logs[1]?.before_data).toMatchObject({ customer_id: 'C-1' });
    expect(plan.logs[1]?.after_data).toMatchObject({ customer_id: 'C-2' });
    expect(plan.logs.map((l) => l.log_id)).toEqual([logId(CMD, 0), logId(CMD, 1)]);
    expect(plan.upserts).toEqual([{ ...stored({ customer_id: 'C-2' }), created_at: T1, updated_at: T1 }]);
  });

  it('given other keys, when decided, then each key is its own line (line_instance_no 1..N of one line are N rows)', () => {
    const plan = decide(state(), [row({ line_instance_no: 1 }), row({ line_instance_no: 2 }), row({ transaction_line_id: 'L-2' })]);
    expect(plan.reply.body).toMatchObject({ inserted_rows: 3 });
    expect(new Set(plan.upserts.map((u) => u.order_line_id)).size).toBe(3);
  });

  it('given a dry run, when decided, then the reply is the one of the real run (dry_run echoed) and nothing is to be written (D22)', () => {
    const s = state([stored()]);
    const rows = [
      row(),
      row({ line_instance_no: 2 }),
      row({ customer_id: 'C-9' }),
      row({ line_instance_no: 3, tax_rate: 2 }),
      row({ line_instance_no: 4, barcode: 'NEW' }),
    ];
    const real = decide(s, rows);
    const dry = decide(s, rows, { dry_run: true });
    expect(dry.upserts).toEqual([]);
    expect(dry.logs).toEqual([]);
    expect(dry.reply).toEqual({ ...real.reply, body: { ...real.reply.body, dry_run: true } });
    expect(real.reply.body).toMatchObject({ accepted_rows: 4, inserted_rows: 2, updated_rows: 1, rejected_rows: 1, warnings_count: 1 });
  });

  it('given a channel_id not of the shop, when decided, then the row is rejected with channel_not_found on channel_id', () => {
    const plan = decide(state(), [row({ channel_id: OTHER })]);
    expect(plan.reply.body).toMatchObject({
      accepted_rows: 0,
      rejected_rows: 1,
      errors: [{ row_index: 0, field: 'channel_id', code: 'channel_not_found', message: expect.any(String) }],
    });
    expect(plan.upserts).toEqual([]);
    expect(plan.logs).toEqual([]);
  });

  it('given a location_id not of the shop, when decided, then the row is rejected with location_not_found on location_id', () => {
    const plan = decide(state(), [row({ location_id: OTHER })]);
    expect(plan.reply.body).toMatchObject({
      rejected_rows: 1,
      errors: [{ row_index: 0, field: 'location_id', code: 'location_not_found', message: expect.any(String) }],
    });
    expect(plan.upserts).toEqual([]);
  });

  it('given neither the channel nor the location is of the shop, when decided, then both errors are listed', () => {
    const plan = decide(state(), [row({ channel_id: OTHER, location_id: OTHER })]);
    expect((plan.reply.body['errors'] as Array<{ code: string }>).map((e) => e.code)).toEqual(['channel_not_found', 'location_not_found']);
    expect(plan.reply.body['rejected_rows']).toBe(1);
  });

  it('given a row with a bad value and an unknown channel and location, when decided, then every problem is listed (D20: a row with several problems lists each)', () => {
    const plan = decide(state(), [row({ tax_rate: 1.5, channel_id: OTHER, location_id: OTHER })]);
    expect(plan.reply.body).toMatchObject({ accepted_rows: 0, rejected_rows: 1 });
    const errors = plan.reply.body['errors'] as Array<{ field: string; code: string }>;
    expect(errors.map((e) => [e.field, e.code])).toEqual(
      expect.arrayContaining([
        ['tax_rate', 'tax_rate_out_of_range'],
        ['channel_id', 'channel_not_found'],
        ['location_id', 'location_not_found'],
      ]),
    );
  });

  it('given a barcode not in the product master, when decided, then the row is stored and a warning is listed', () => {
    const plan = decide(state(), [row({ barcode: 'UNKNOWN' }), row({ line_instance_no: 2 })]);
    expect(plan.reply.body).toMatchObject({
      accepted_rows: 2,
      inserted_rows: 2,
      rejected_rows: 0,
      warnings_count: 1,
      errors: [],
      warnings: [{ row_index: 0, field: 'barcode', code: 'product_not_in_master_warning', message: expect.any(String) }],
    });
    expect(plan.upserts.map((u) => u.barcode)).toEqual(['UNKNOWN', KNOWN]);
  });

  it('given valid and rejected rows in one batch, when decided, then the valid ones are stored and the others listed by row_index', () => {
    const plan = decide(state(), [
      row({ line_instance_no: 1 }),
      row({ line_instance_no: 0 }),
      row({ line_instance_no: 2 }),
      row({ line_instance_no: 3, refund_amount: -5 }),
      'not a row',
    ]);
    expect(plan.reply.body).toMatchObject({ accepted_rows: 2, inserted_rows: 2, updated_rows: 0, rejected_rows: 3, warnings_count: 0 });
    expect((plan.reply.body['errors'] as Array<{ row_index: number; code: string }>).map((e) => [e.row_index, e.code])).toEqual([
      [1, 'invalid_value'],
      [3, 'refund_amount_negative'],
      [4, 'invalid_type'],
    ]);
    expect(plan.upserts.map((u) => u.line_instance_no)).toEqual([1, 2]);
  });

  it('given a row with an unknown field (D27), when decided, then that row is rejected with unknown_field and the others go on', () => {
    const plan = decide(
      state(),
      [row({ line_instance_no: 1 }), row({ line_instance_no: 2, avaliable: true }), row({ line_instance_no: 3 })],
      {
        unknown_fields: 'reject',
      },
    );
    expect(plan.reply.body).toMatchObject({ accepted_rows: 2, inserted_rows: 2, rejected_rows: 1 });
    expect(plan.reply.body['errors']).toEqual([
      { row_index: 1, field: 'avaliable', code: 'unknown_field', message: 'avaliable is not allowed' },
    ]);
    expect(plan.upserts.map((u) => u.line_instance_no)).toEqual([1, 3]);
  });

  it('given a command appended before D27 (no unknown_fields), when decided or replayed, then an unknown field is ignored as it was (D3, D26)', () => {
    const plan = decide(state(), [row({ quantity: 2 })]);
    expect(plan.reply.body).toMatchObject({ accepted_rows: 1, inserted_rows: 1, rejected_rows: 0, errors: [] });
    expect(plan.upserts[0]).not.toHaveProperty('quantity');
  });

  it('given times PostgreSQL cannot store (year 0000, or past year 9999 in UTC), when decided, then those rows are rejected with invalid_value and the valid row goes on (never a 500 from the store)', () => {
    const plan = decide(state(), [
      row({ line_instance_no: 1 }),
      row({ line_instance_no: 2, ordered_at: '0000-01-01T00:00:00Z' }),
      row({ line_instance_no: 3, refunded_at: '9999-12-31T23:00:00-02:00' }),
    ]);
    expect(plan.reply).toMatchObject({ status: 200, body: { ok: true, accepted_rows: 1, inserted_rows: 1, rejected_rows: 2 } });
    expect(plan.reply.body['errors']).toEqual([
      { row_index: 1, field: 'ordered_at', code: 'invalid_value', message: expect.any(String) },
      { row_index: 2, field: 'refunded_at', code: 'invalid_value', message: expect.any(String) },
    ]);
    expect(plan.upserts.map((u) => u.line_instance_no)).toEqual([1]);
  });

  it('given only rejected rows, when decided, then the reply still carries adapter_version (D23) and nothing is written', () => {
    const plan = decide(state(), [row({ tax_rate: 9 })]);
    expect(plan.reply).toMatchObject({ status: 200, body: { ok: true, accepted_rows: 0, rejected_rows: 1, adapter_version: VERSION } });
    expect(plan.upserts).toEqual([]);
    expect(plan.logs).toEqual([]);
  });

  it('given a rejected row repeating a stored key, when decided, then the stored line is left alone', () => {
    const plan = decide(state([stored()]), [row({ customer_id: 'C-2', tax_amount: 1 })]);
    expect(plan.reply.body).toMatchObject({ accepted_rows: 0, updated_rows: 0, rejected_rows: 1 });
    expect(plan.upserts).toEqual([]);
  });

  it('given problems the gateway found in a row (a number JSON would round, a time outside the business range), when decided, then that row is rejected with them and the others go on', () => {
    const problem = {
      row_index: 1,
      field: 'gross_amount_taxincl',
      code: 'invalid_value',
      message: 'gross_amount_taxincl 9007199254740993 cannot be stored exactly (it would become 9007199254740992)',
    };
    const plan = decide(state(), [row({ line_instance_no: 1 }), row({ line_instance_no: 2 }), row({ line_instance_no: 3 })], {
      row_problems: [problem],
    });
    expect(plan.reply.body).toMatchObject({ accepted_rows: 2, inserted_rows: 2, rejected_rows: 1 });
    expect(plan.reply.body['errors']).toEqual([problem]);
    expect(plan.upserts.map((u) => u.line_instance_no)).toEqual([1, 3]);
  });

  it('given a row the gateway found a problem in that also breaks a row rule, when decided, then both are listed', () => {
    const problem = {
      row_index: 0,
      field: 'ordered_at',
      code: 'invalid_value',
      message: 'ordered_at must be on or after 2000-01-01T00:00:00Z and before 2100-01-01T00:00:00Z',
    };
    const plan = decide(state(), [row({ tax_rate: 2 })], { row_problems: [problem] });
    expect(plan.reply.body['errors']).toEqual([expect.objectContaining({ row_index: 0, code: 'tax_rate_out_of_range' }), problem]);
    expect(plan.upserts).toEqual([]);
  });
});
