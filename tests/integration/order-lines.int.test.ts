import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validOrderRow } from '@ingest/domain/testing';
import { INGEST_SECRET, post, startPipeline, type HttpResult, type TestPipeline } from '../support/pipeline.ts';

// Endpoint 6 of the spec (order lines bulk upsert), end to end: HTTP -> Kafka -> projector ->
// PostgreSQL -> reply, then the rows as agent_read shows them. One `it` per rule (spec: Order line,
// Row validation, Errors, Limits; D6a, D6b, D11, D20, D20a, D21, D22, D23, D24, D25).

let p: TestPipeline;
beforeAll(async () => {
  // The daily snapshot scheduler (D16) is pushed out of the file's lifetime: it has nothing to do here.
  p = await startPipeline({ env: { DAILY_SNAPSHOT_CHECK_MS: String(60 * 60 * 1000) } });
});
afterAll(async () => p?.stop());

const ING = { 'x-ingest-secret': INGEST_SECRET };
const ENDPOINT = '/api/order-line-master/bulk-upsert';
const KNOWN = '4900000000001';
const ADAPTER_VERSION = (
  JSON.parse(readFileSync(new URL('../../services/projector/package.json', import.meta.url), 'utf8')) as { version: string }
).version;

const uniqueShop = (what: string) => `ol-${what}-${randomUUID().slice(0, 8)}.example`;

interface Shop {
  shop: string;
  ch: string;
  loc: string;
}

/** A shop with one channel, one location and one product (barcode KNOWN, sku SKU-1) in its master. */
async function newShop(what: string): Promise<Shop> {
  const shop = uniqueShop(what);
  const l = await post(`${p.url()}/api/admin/locations`, { shop, locations: [{ name: 'Store' }] }, ING);
  expect(l.status, l.text).toBe(200);
  const c = await post(`${p.url()}/api/admin/channels`, { shop, channels: [{ name: 'Web' }] }, ING);
  expect(c.status, c.text).toBe(200);
  const pr = await post(
    `${p.url()}/api/ingest/products`,
    { shop, products: [{ barcode: KNOWN, product_name: 'Green tea', sku: 'SKU-1' }] },
    ING,
  );
  expect(pr.status, pr.text).toBe(200);
  return { shop, loc: l.json.locations[0].location_id as string, ch: c.json.channels[0].channel_id as string };
}

/** A row that meets every rule: 1,100 - 100 = 1,000 incl. tax; 1,000 - 90.91 = 909.09 excl. tax. */
function row(s: Shop, over: Record<string, unknown> = {}): Record<string, unknown> {
  return validOrderRow({ barcode: KNOWN, channel_id: s.ch, location_id: s.loc }, over);
}

function without(r: Record<string, unknown>, field: string): Record<string, unknown> {
  const copy = { ...r };
  delete copy[field];
  return copy;
}

const send = (shop: string, rows: unknown, extra: Record<string, unknown> = {}): Promise<HttpResult> =>
  post(`${p.url()}${ENDPOINT}`, { shop, rows, ...extra }, ING);

/** Sends and asserts the 200 of D6b. */
async function upsert(shop: string, rows: unknown[], extra: Record<string, unknown> = {}): Promise<any> {
  const r = await send(shop, rows, extra);
  expect(r.status, r.text.slice(0, 1000)).toBe(200);
  expect(r.json.ok).toBe(true);
  return r.json;
}

const problem = (row_index: number, field: string, code: string) => ({ row_index, field, code, message: expect.any(String) });

async function lines(shop: string): Promise<any[]> {
  const { rows } = await p.db.query(
    'SELECT * FROM agent_read.order_line_master WHERE shop = $1 ORDER BY source_system, transaction_id, transaction_line_id, line_instance_no',
    [shop],
  );
  return rows;
}

async function logs(shop: string): Promise<any[]> {
  const { rows } = await p.db.query(
    'SELECT * FROM agent_read.order_line_master_update_logs WHERE shop = $1 ORDER BY created_at, command_id, log_seq',
    [shop],
  );
  return rows;
}

describe('POST /api/order-line-master/bulk-upsert: row rules (spec Row validation, D20)', () => {
  it('required: a missing required field rejects the row with code required on that field', async () => {
    const s = await newShop('required');
    const b = await upsert(s.shop, [
      without(row(s, { line_instance_no: 1 }), 'barcode'),
      without(row(s, { line_instance_no: 2 }), 'ordered_at'),
      without(row(s, { line_instance_no: 3 }), 'tax_rate'),
      without(row(s, { line_instance_no: 4 }), 'channel_id'),
      row(s, { line_instance_no: 5, is_test: null }),
    ]);
    expect(b).toMatchObject({ accepted_rows: 0, inserted_rows: 0, rejected_rows: 5 });
    expect(b.errors).toEqual([
      problem(0, 'barcode', 'required'),
      problem(1, 'ordered_at', 'required'),
      problem(2, 'tax_rate', 'required'),
      problem(3, 'channel_id', 'required'),
      problem(4, 'is_test', 'required'),
    ]);
    expect(await lines(s.shop)).toEqual([]);
  });

  it('invalid_type: a field of the wrong type rejects the row with code invalid_type', async () => {
    const s = await newShop('type');
    const b = await upsert(s.shop, [
      row(s, { line_instance_no: 1, gross_amount_taxincl: '1100' }),
      row(s, { line_instance_no: 2, is_test: 'no' }),
      row(s, { line_instance_no: '3' }),
      row(s, { line_instance_no: 4, customer_id: 42 }),
      'not an object',
    ]);
    expect(b).toMatchObject({ accepted_rows: 0, rejected_rows: 5 });
    expect(b.errors).toEqual([
      problem(0, 'gross_amount_taxincl', 'invalid_type'),
      problem(1, 'is_test', 'invalid_type'),
      problem(2, 'line_instance_no', 'invalid_type'),
      problem(3, 'customer_id', 'invalid_type'),
      { row_index: 4, field: expect.any(String), code: 'invalid_type', message: expect.any(String) },
    ]);
  });

  it('invalid_value: line_instance_no 0 and a bad datetime reject the row with code invalid_value', async () => {
    const s = await newShop('value');
    const b = await upsert(s.shop, [
      row(s, { line_instance_no: 0 }),
      row(s, { line_instance_no: 2, ordered_at: 'yesterday' }),
      row(s, { line_instance_no: 3, ordered_at: '2026-13-01T00:00:00Z' }),
      row(s, { line_instance_no: 4, refunded_at: 'not-a-date' }),
      row(s, { line_instance_no: 5 }),
    ]);
    expect(b).toMatchObject({ accepted_rows: 1, inserted_rows: 1, rejected_rows: 4 });
    expect(b.errors).toEqual([
      problem(0, 'line_instance_no', 'invalid_value'),
      problem(1, 'ordered_at', 'invalid_value'),
      problem(2, 'ordered_at', 'invalid_value'),
      problem(3, 'refunded_at', 'invalid_value'),
    ]);
    expect((await lines(s.shop)).map((l) => l.line_instance_no)).toEqual([5]);
  });

  it('invalid_value: a calendar date that does not exist (2026-02-30) is a bad datetime, not stored as another day', async () => {
    const s = await newShop('nodate');
    const b = await upsert(s.shop, [row(s, { ordered_at: '2026-02-30T00:00:00Z' })]);
    // Not rolled over into another day (2026-03-02) and stored.
    expect((await lines(s.shop)).map((l) => (l.ordered_at as Date).toISOString())).toEqual([]);
    expect(b.errors).toEqual([problem(0, 'ordered_at', 'invalid_value')]);
    expect(b).toMatchObject({ accepted_rows: 0, rejected_rows: 1 });
  });

  it('a datetime PostgreSQL cannot store (year 0000, or past year 9999 in UTC) is a row problem: HTTP 200, the row rejected, the valid rows stored (never a 500)', async () => {
    const s = await newShop('year0');
    const r = await send(s.shop, [
      row(s, { line_instance_no: 1 }),
      row(s, { line_instance_no: 2, ordered_at: '0000-01-01T00:00:00Z' }),
      row(s, { line_instance_no: 3, refunded_at: '9999-12-31T23:00:00-02:00' }),
    ]);
    expect(r.status, r.text).toBe(200);
    expect(r.json.errors).toEqual([problem(1, 'ordered_at', 'invalid_value'), problem(2, 'refunded_at', 'invalid_value')]);
    expect((await lines(s.shop)).map((l) => l.line_instance_no)).toEqual([1]);
  });

  it('amount_mismatch: gross - discount vs net incl. tax, exact and inclusive at 0.01 on both sides (D20a)', async () => {
    const s = await newShop('amount');
    // tax 0 and net excl. = net incl., so only the first identity is under test.
    const a = (n: number, gross: number, discount: number, net: number) =>
      row(s, {
        line_instance_no: n,
        gross_amount_taxincl: gross,
        discount_amount_taxincl: discount,
        net_amount_taxincl: net,
        tax_amount: 0,
        net_amount_taxexcl: net,
        tax_rate: 0,
      });
    const b = await upsert(s.shop, [
      a(1, 100.0, 0.0, 99.99), // passes: exactly 0.01
      a(2, 100.0, 0.0, 99.98), // fails: 0.02
      a(3, 100.0, 0.0, 100.01), // passes: -0.01
      a(4, 100.0, 0.0, 100.02), // fails: -0.02
      a(5, 0.3, 0.1, 0.2), // passes: 0.3 - 0.1 is 0.19999999999999998 in binary floating point
      a(6, 100.01, 0, 100), // passes: 100.01 - 100 is 0.010000000000005116 in binary floating point
      a(7, 1.005, 0, 0.995), // passes: exactly 0.01
      a(8, 100.0, 0.0, 99.989), // fails: 0.011
    ]);
    expect(b).toMatchObject({ accepted_rows: 5, inserted_rows: 5, rejected_rows: 3, warnings_count: 0 });
    expect(b.errors).toEqual([
      problem(1, 'net_amount_taxincl', 'amount_mismatch'),
      problem(3, 'net_amount_taxincl', 'amount_mismatch'),
      problem(7, 'net_amount_taxincl', 'amount_mismatch'),
    ]);
    const stored = await lines(s.shop);
    expect(stored.map((l) => [l.line_instance_no, l.gross_amount_taxincl, l.discount_amount_taxincl, l.net_amount_taxincl])).toEqual([
      [1, 100, 0, 99.99],
      [3, 100, 0, 100.01],
      [5, 0.3, 0.1, 0.2],
      [6, 100.01, 0, 100],
      [7, 1.005, 0, 0.995],
    ]);
  });

  it('tax_mismatch: net incl. - tax vs net excl. tax, exact and inclusive at 0.01 on both sides (D20a)', async () => {
    const s = await newShop('tax');
    const t = (n: number, netIncl: number, tax: number, netExcl: number) =>
      row(s, {
        line_instance_no: n,
        gross_amount_taxincl: netIncl,
        discount_amount_taxincl: 0,
        net_amount_taxincl: netIncl,
        tax_amount: tax,
        net_amount_taxexcl: netExcl,
      });
    const b = await upsert(s.shop, [
      t(1, 100.0, 0.0, 99.99), // passes
      t(2, 100.0, 0.0, 99.98), // fails
      t(3, 1000, 90.91, 909.1), // passes: -0.01
      t(4, 1000, 90.91, 909.11), // fails: -0.02
      t(5, 0.3, 0.1, 0.2), // passes despite binary floating point
      t(6, 100.01, 0, 100), // passes despite binary floating point
    ]);
    expect(b).toMatchObject({ accepted_rows: 4, inserted_rows: 4, rejected_rows: 2 });
    expect(b.errors).toEqual([problem(1, 'net_amount_taxexcl', 'tax_mismatch'), problem(3, 'net_amount_taxexcl', 'tax_mismatch')]);
    expect((await lines(s.shop)).map((l) => l.line_instance_no)).toEqual([1, 3, 5, 6]);
  });

  it('tax_rate_out_of_range: -0.01 and 1.01 are rejected; 0 and 1 are within [0, 1]', async () => {
    const s = await newShop('rate');
    const b = await upsert(s.shop, [
      row(s, { line_instance_no: 1, tax_rate: -0.01 }),
      row(s, { line_instance_no: 2, tax_rate: 1.01 }),
      row(s, { line_instance_no: 3, tax_rate: 0 }),
      row(s, { line_instance_no: 4, tax_rate: 1 }),
    ]);
    expect(b).toMatchObject({ accepted_rows: 2, inserted_rows: 2, rejected_rows: 2 });
    expect(b.errors).toEqual([problem(0, 'tax_rate', 'tax_rate_out_of_range'), problem(1, 'tax_rate', 'tax_rate_out_of_range')]);
    expect((await lines(s.shop)).map((l) => [l.line_instance_no, l.tax_rate])).toEqual([
      [3, 0],
      [4, 1],
    ]);
  });

  it('refund_amount_negative: a negative refund_amount is rejected; 0 is accepted', async () => {
    const s = await newShop('refundneg');
    const b = await upsert(s.shop, [
      row(s, { line_instance_no: 1, refund_amount: -0.01 }),
      row(s, { line_instance_no: 2, refund_amount: 0 }),
    ]);
    expect(b).toMatchObject({ accepted_rows: 1, inserted_rows: 1, rejected_rows: 1 });
    expect(b.errors).toEqual([problem(0, 'refund_amount', 'refund_amount_negative')]);
  });

  it('location_not_found: an unknown location_id, or a location of another shop, rejects the row (spec rule 5)', async () => {
    const s = await newShop('loc');
    const other = await newShop('loc-other');
    const b = await upsert(s.shop, [
      row(s, { line_instance_no: 1, location_id: randomUUID() }),
      row(s, { line_instance_no: 2, location_id: other.loc }),
      row(s, { line_instance_no: 3 }),
    ]);
    expect(b).toMatchObject({ accepted_rows: 1, inserted_rows: 1, rejected_rows: 2 });
    expect(b.errors).toEqual([problem(0, 'location_id', 'location_not_found'), problem(1, 'location_id', 'location_not_found')]);
    expect((await lines(s.shop)).map((l) => l.line_instance_no)).toEqual([3]);
  });

  it('channel_not_found: an unknown channel_id, or a channel of another shop, rejects the row (spec rule 5)', async () => {
    const s = await newShop('ch');
    const other = await newShop('ch-other');
    const b = await upsert(s.shop, [
      row(s, { line_instance_no: 1, channel_id: randomUUID() }),
      row(s, { line_instance_no: 2, channel_id: other.ch }),
      row(s, { line_instance_no: 3 }),
    ]);
    expect(b).toMatchObject({ accepted_rows: 1, inserted_rows: 1, rejected_rows: 2 });
    expect(b.errors).toEqual([problem(0, 'channel_id', 'channel_not_found'), problem(1, 'channel_id', 'channel_not_found')]);
    expect((await lines(s.shop)).map((l) => l.line_instance_no)).toEqual([3]);
  });

  it('several problems on one row: each is listed with the row_index, the row counted once in rejected_rows', async () => {
    const s = await newShop('several');
    const b = await upsert(s.shop, [
      row(s, { line_instance_no: 1 }),
      without(row(s, { line_instance_no: 0, tax_rate: 2, refund_amount: -1, gross_amount_taxincl: 5000 }), 'currency'),
    ]);
    expect(b).toMatchObject({ accepted_rows: 1, rejected_rows: 1 });
    expect(b.errors).toHaveLength(5);
    expect(b.errors).toEqual(
      expect.arrayContaining([
        problem(1, 'line_instance_no', 'invalid_value'),
        problem(1, 'currency', 'required'),
        problem(1, 'net_amount_taxincl', 'amount_mismatch'),
        problem(1, 'tax_rate', 'tax_rate_out_of_range'),
        problem(1, 'refund_amount', 'refund_amount_negative'),
      ]),
    );
  });

  it('several problems on one row include the registry ones: a bad value and an unknown channel and location are all listed (D20)', async () => {
    const s = await newShop('several-reg');
    const b = await upsert(s.shop, [row(s, { tax_rate: 1.5, channel_id: randomUUID(), location_id: randomUUID() })]);
    expect(b).toMatchObject({ accepted_rows: 0, rejected_rows: 1 });
    expect(b.errors).toEqual(
      expect.arrayContaining([
        problem(0, 'tax_rate', 'tax_rate_out_of_range'),
        problem(0, 'channel_id', 'channel_not_found'),
        problem(0, 'location_id', 'location_not_found'),
      ]),
    );
  });
});

describe('D27: a row field the spec does not define', () => {
  it('rejects that row with code unknown_field naming the field; the other rows are stored', async () => {
    const s = await newShop('d27');
    const b = await upsert(s.shop, [
      row(s, { line_instance_no: 1 }),
      row(s, { line_instance_no: 2, quantity: 3 }),
      row(s, { line_instance_no: 3 }),
    ]);
    expect(b).toMatchObject({ accepted_rows: 2, inserted_rows: 2, rejected_rows: 1 });
    expect(b.errors).toEqual([{ row_index: 1, field: 'quantity', code: 'unknown_field', message: 'quantity is not allowed' }]);
    expect((await lines(s.shop)).map((l) => l.line_instance_no)).toEqual([1, 3]);
  });
});

describe('POST /api/order-line-master/bulk-upsert: response, storage and logs', () => {
  it('valid rows are stored while others are rejected: HTTP 200, ok true, the counts, errors and warnings (spec rule 3, D6b)', async () => {
    const s = await newShop('mixed');
    const r = await send(s.shop, [
      row(s, { line_instance_no: 1 }),
      row(s, { line_instance_no: 2, tax_rate: 7 }),
      row(s, { line_instance_no: 3, barcode: 'NOT-IN-MASTER' }),
      row(s, { line_instance_no: 4, location_id: randomUUID() }),
      row(s, { line_instance_no: 5 }),
    ]);
    expect(r.status).toBe(200);
    expect(r.json).toEqual({
      ok: true,
      dry_run: false,
      accepted_rows: 3,
      inserted_rows: 3,
      updated_rows: 0,
      rejected_rows: 2,
      warnings_count: 1,
      errors: [problem(1, 'tax_rate', 'tax_rate_out_of_range'), problem(3, 'location_id', 'location_not_found')],
      warnings: [problem(2, 'barcode', 'product_not_in_master_warning')],
      adapter_version: ADAPTER_VERSION,
    });
    const stored = await lines(s.shop);
    expect(stored.map((l) => l.line_instance_no)).toEqual([1, 3, 5]);
    expect(stored[0]).toMatchObject({
      shop: s.shop,
      source_system: 'pos',
      transaction_id: 'T-1',
      transaction_line_id: 'L-1',
      barcode: KNOWN,
      ordered_at: new Date('2026-05-01T01:00:00.000Z'),
      currency: 'JPY',
      is_test: false,
      channel_id: s.ch,
      location_id: s.loc,
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

  it('product_not_in_master_warning: the row is stored and warned about; the view has product_name and sku NULL for it, filled for a known barcode', async () => {
    const s = await newShop('warn');
    const b = await upsert(s.shop, [row(s, { line_instance_no: 1, barcode: 'UNKNOWN-1' }), row(s, { line_instance_no: 2 })]);
    expect(b).toMatchObject({ accepted_rows: 2, inserted_rows: 2, rejected_rows: 0, warnings_count: 1, errors: [] });
    expect(b.warnings).toEqual([problem(0, 'barcode', 'product_not_in_master_warning')]);
    const stored = await lines(s.shop);
    expect(stored.map((l) => [l.line_instance_no, l.barcode, l.product_name, l.sku])).toEqual([
      [1, 'UNKNOWN-1', null, null],
      [2, KNOWN, 'Green tea', 'SKU-1'],
    ]);
  });

  it('resend of identical rows: accepted, inserted 0, updated 0, no new log rows and the rows untouched (D21)', async () => {
    const s = await newShop('resend');
    const rows = [
      row(s, { line_instance_no: 1 }),
      row(s, { line_instance_no: 2, refund_amount: 10, refunded_at: '2026-05-02T00:00:00Z', refund_reason: 'broken', tax_rate: 0.08 }),
    ];
    expect(await upsert(s.shop, rows)).toMatchObject({ accepted_rows: 2, inserted_rows: 2, updated_rows: 0 });
    const before = await lines(s.shop);
    const logsBefore = await logs(s.shop);
    expect(logsBefore).toHaveLength(2);
    expect(await upsert(s.shop, rows)).toMatchObject({
      accepted_rows: 2,
      inserted_rows: 0,
      updated_rows: 0,
      rejected_rows: 0,
      errors: [],
      warnings: [],
    });
    expect(await logs(s.shop)).toEqual(logsBefore);
    expect(await lines(s.shop)).toEqual(before);
  });

  it('update log: a changed customer_id is an update with before_data, after_data and changed_fields [customer_id]; default change_source external_app', async () => {
    const s = await newShop('update');
    await upsert(s.shop, [row(s)]);
    const b = await upsert(s.shop, [row(s, { customer_id: 'C-2' })]);
    expect(b).toMatchObject({ accepted_rows: 1, inserted_rows: 0, updated_rows: 1 });
    const l = await logs(s.shop);
    expect(l.map((x) => x.change_type)).toEqual(['insert', 'update']);
    expect(l[0]).toMatchObject({
      before_data: null,
      change_source: 'external_app',
      ingest_run_id: null,
      idempotency_key: null,
      changed_by_user_id: null,
    });
    expect(l[0].after_data).toMatchObject({ customer_id: 'C-1', transaction_id: 'T-1', line_instance_no: 1, net_amount_taxexcl: 909.09 });
    expect(l[1]).toMatchObject({
      change_type: 'update',
      changed_fields: ['customer_id'],
      change_source: 'external_app',
      source_system: 'pos',
      transaction_id: 'T-1',
      transaction_line_id: 'L-1',
      line_instance_no: 1,
    });
    expect(l[1].before_data).toMatchObject({ customer_id: 'C-1' });
    expect(l[1].after_data).toMatchObject({ customer_id: 'C-2' });
    // Nothing else differs between before and after.
    expect({ ...l[1].before_data, customer_id: 'C-2' }).toEqual(l[1].after_data);
    expect(l[1].order_line_id).toBe((await lines(s.shop))[0].order_line_id);
    expect((await lines(s.shop))[0].customer_id).toBe('C-2');
  });

  it('update log: raising refund_amount, or setting refunded_at from null, is a refund (D21)', async () => {
    const s = await newShop('refund');
    await upsert(s.shop, [row(s, { line_instance_no: 1 }), row(s, { line_instance_no: 2 })]);
    const b = await upsert(s.shop, [
      row(s, { line_instance_no: 1, refund_amount: 1000 }),
      row(s, { line_instance_no: 2, refunded_at: '2026-05-03T12:00:00+09:00', refund_reason: 'customer return' }),
    ]);
    expect(b).toMatchObject({ accepted_rows: 2, inserted_rows: 0, updated_rows: 2 });
    const l = (await logs(s.shop)).filter((x) => x.change_type !== 'insert');
    expect(l.map((x) => [x.line_instance_no, x.change_type, x.changed_fields])).toEqual([
      [1, 'refund', ['refund_amount']],
      [2, 'refund', ['refunded_at', 'refund_reason']],
    ]);
    expect(l[0].before_data.refund_amount).toBe(0);
    expect(l[0].after_data.refund_amount).toBe(1000);
    expect(l[1].before_data.refunded_at).toBeNull();
    expect(l[1].after_data.refunded_at).toBe('2026-05-03T03:00:00.000Z');
    const stored = await lines(s.shop);
    expect(stored.map((x) => [x.refund_amount, x.refunded_at, x.refund_reason])).toEqual([
      [1000, null, null],
      [0, new Date('2026-05-03T03:00:00.000Z'), 'customer return'],
    ]);
  });

  it('logs carry the request change_source, ingest_run_id, idempotency_key and changed_by_user_id', async () => {
    const s = await newShop('audit');
    const user = randomUUID();
    await upsert(s.shop, [row(s)], {
      change_source: 'pos-sync',
      ingest_run_id: 'run-42',
      idempotency_key: 'idem-42',
      changed_by_user_id: user,
    });
    const l = await logs(s.shop);
    expect(l).toHaveLength(1);
    expect(l[0]).toMatchObject({
      change_type: 'insert',
      change_source: 'pos-sync',
      ingest_run_id: 'run-42',
      idempotency_key: 'idem-42',
      changed_by_user_id: user,
    });
  });

  it('changed_by_user_id in the urn:uuid form that JSON Schema format uuid admits is answered without a 500 (400, or stored as the uuid)', async () => {
    const s = await newShop('urn');
    const user = randomUUID();
    const r = await send(s.shop, [row(s)], { changed_by_user_id: `urn:uuid:${user}` });
    expect(r.status, r.text).not.toBe(500);
    expect([200, 400]).toContain(r.status);
    if (r.status === 400) expect(r.json).toEqual({ ok: false, error: expect.stringContaining('changed_by_user_id') });
    else expect((await logs(s.shop))[0]?.changed_by_user_id).toBe(user);
  });

  it('D6a: the same key twice in one batch is inserted then updated: inserted_rows 1, updated_rows 1, logs insert then update by log_seq', async () => {
    const s = await newShop('d6a');
    const b = await upsert(s.shop, [row(s), row(s, { customer_id: 'C-2' })]);
    expect(b).toMatchObject({ accepted_rows: 2, inserted_rows: 1, updated_rows: 1, rejected_rows: 0 });
    const l = await logs(s.shop);
    expect(l.map((x) => [x.change_type, x.log_seq])).toEqual([
      ['insert', 0],
      ['update', 1],
    ]);
    expect(l[0].command_id).toBe(l[1].command_id);
    expect(l[1].changed_fields).toEqual(['customer_id']);
    expect(l[1].before_data.customer_id).toBe('C-1');
    expect(l[1].after_data.customer_id).toBe('C-2');
    const stored = await lines(s.shop);
    expect(stored).toHaveLength(1);
    expect(stored[0].customer_id).toBe('C-2');
  });

  it('dry_run (D22, issue 16): the same body a real run gives, dry_run echoed, as_of added, and nothing written or appended: no rows, no logs, no outbox rows, no result', async () => {
    const s = await newShop('dry');
    await upsert(s.shop, [row(s, { line_instance_no: 1 }), row(s, { line_instance_no: 2 })]);
    const linesBefore = await lines(s.shop);
    const logsBefore = await logs(s.shop);
    const count = async (from: string) => (await p.db.query(`SELECT count(*)::int AS n FROM ${from}`)).rows[0].n as number;
    const runtime = async () => [
      await count('agent_runtime.outbox'),
      await count('agent_runtime.command_results'),
      await count('agent_runtime.command_requests'),
    ];
    const runtimeBefore = await runtime();
    const rows = [
      row(s, { line_instance_no: 1 }), // identical
      row(s, { line_instance_no: 2, customer_id: 'C-9' }), // update
      row(s, { line_instance_no: 3 }), // insert
      row(s, { line_instance_no: 4, barcode: 'NOT-IN-MASTER' }), // insert with a warning
      row(s, { line_instance_no: 5, channel_id: randomUUID() }), // rejected by the registry
      row(s, { line_instance_no: 6, refund_amount: -1 }), // rejected
      row(s, { line_instance_no: 3, customer_id: 'C-3' }), // D6a: update of the row inserted above
    ];

    const dry = await upsert(s.shop, rows, { dry_run: true });
    expect(dry).toMatchObject({ dry_run: true, accepted_rows: 5, inserted_rows: 2, updated_rows: 2, rejected_rows: 2, warnings_count: 1 });
    expect(Date.parse(dry.as_of)).not.toBeNaN();
    expect(await lines(s.shop)).toEqual(linesBefore);
    expect(await logs(s.shop)).toEqual(logsBefore);
    // Issue 16: a dry run is never appended, so the projector stores no result and writes no outbox row for it.
    expect(await runtime()).toEqual(runtimeBefore);

    const real = await upsert(s.shop, rows);
    const { as_of: _asOf, ...dryBody } = dry;
    expect(real).toEqual({ ...dryBody, dry_run: false });
    expect((await lines(s.shop)).map((l) => [l.line_instance_no, l.customer_id])).toEqual([
      [1, 'C-1'],
      [2, 'C-9'],
      [3, 'C-3'],
      [4, 'C-1'],
    ]);
    // The real run did write its audit events (one outbox row stands for the command's 4 log records).
    const { rows: realResults } = await p.db.query(
      `SELECT command_id FROM agent_runtime.command_results WHERE shop = $1 AND kind = 'order_lines.upsert' ORDER BY created_at DESC LIMIT 1`,
      [s.shop],
    );
    const outbox = await p.db.query('SELECT count(*)::int AS n FROM agent_runtime.outbox WHERE command_id = $1', [
      realResults[0].command_id,
    ]);
    expect(outbox.rows[0].n).toBe(1);
    const realLogs = await p.db.query('SELECT count(*)::int AS n FROM public.order_line_master_update_logs WHERE command_id = $1', [
      realResults[0].command_id,
    ]);
    expect(realLogs.rows[0].n).toBe(4);
  });

  it('adapter_version (D23) is the order-lines projector package version', async () => {
    const s = await newShop('version');
    const b = await upsert(s.shop, [row(s)]);
    expect(ADAPTER_VERSION).toMatch(/^\d+\.\d+\.\d+/);
    expect(b.adapter_version).toBe(ADAPTER_VERSION);
    const rejectedOnly = await upsert(s.shop, [row(s, { tax_rate: 9 })]);
    expect(rejectedOnly.adapter_version).toBe(ADAPTER_VERSION);
  });
});

describe('POST /api/order-line-master/bulk-upsert: HTTP errors and limits', () => {
  it('400 `rows[] required and non-empty` when rows is missing, empty or not an array', async () => {
    const shop = uniqueShop('rows');
    for (const body of [{ shop }, { shop, rows: [] }, { shop, rows: 'rows' }, { shop, rows: { 0: {} } }, { shop, rows: null }]) {
      const r = await post(`${p.url()}${ENDPOINT}`, body, ING);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.json).toEqual({ ok: false, error: 'rows[] required and non-empty' });
    }
  });

  it('400 `shop required` when shop is missing', async () => {
    const s = { shop: 'x', ch: randomUUID(), loc: randomUUID() };
    const r = await post(`${p.url()}${ENDPOINT}`, { rows: [row(s)] }, ING);
    expect(r.status).toBe(400);
    expect(r.json).toEqual({ ok: false, error: 'shop required' });
  });

  it('D11: a wrongly typed top-level field is 400 naming it; a body that is not a JSON object is 400 `invalid JSON body`; nothing is written', async () => {
    const s = await newShop('d11');
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ dry_run: 'yes' }, 'dry_run must be boolean'],
      [{ change_source: 5 }, 'change_source must be string'],
      [{ ingest_run_id: ['run'] }, 'ingest_run_id must be string'],
      [{ idempotency_key: 1 }, 'idempotency_key must be string'],
    ];
    for (const [extra, error] of cases) {
      const r = await send(s.shop, [row(s)], extra);
      expect(r.status, JSON.stringify(extra)).toBe(400);
      expect(r.json).toEqual({ ok: false, error });
    }
    const badUser = await send(s.shop, [row(s)], { changed_by_user_id: 'not-a-uuid' });
    expect(badUser.status).toBe(400);
    expect(badUser.json).toEqual({ ok: false, error: expect.stringContaining('changed_by_user_id') });
    const shopType = await post(`${p.url()}${ENDPOINT}`, { shop: 42, rows: [row(s)] }, ING);
    expect(shopType.status).toBe(400);
    expect(shopType.json).toEqual({ ok: false, error: 'shop must be string' });
    for (const raw of ['{not json', '[]', '"rows"']) {
      const r = await post(`${p.url()}${ENDPOINT}`, raw, ING);
      expect(r.status, raw).toBe(400);
      expect(r.json).toEqual({ ok: false, error: 'invalid JSON body' });
    }
    expect(await lines(s.shop)).toEqual([]);
  });

  it('503 `INGEST_SECRET not configured` when the gateway has no ingest secret, with or without the header', async () => {
    const g = await p.startGateway({ INGEST_SECRET: '' });
    for (const headers of [{}, ING] as Array<Record<string, string>>) {
      const r = await post(`http://127.0.0.1:${g.port}${ENDPOINT}`, { shop: 'a.example', rows: [{}] }, headers);
      expect(r.status).toBe(503);
      expect(r.json).toEqual({ ok: false, error: 'INGEST_SECRET not configured' });
    }
  });

  it('401 text `unauthorized` without the secret or with a wrong one', async () => {
    for (const headers of [{}, { 'x-ingest-secret': 'wrong' }] as Array<Record<string, string>>) {
      const r = await post(`${p.url()}${ENDPOINT}`, { shop: 'a.example', rows: [{}] }, headers);
      expect(r.status).toBe(401);
      expect(r.text).toBe('unauthorized');
    }
  });

  it('5,000 rows are accepted (200) and stored; 5,001 are refused with 400 naming the limit', async () => {
    const s = await newShop('limit');
    const many = (n: number) => Array.from({ length: n }, (_, i) => row(s, { line_instance_no: i + 1 }));
    const started = performance.now();
    const r = await send(s.shop, many(5000));
    const ms = performance.now() - started;
    console.info(`[order-lines] 5,000 rows answered in ${Math.round(ms)} ms`);
    expect(r.status, r.text.slice(0, 500)).toBe(200);
    expect(r.json).toMatchObject({ ok: true, accepted_rows: 5000, inserted_rows: 5000, rejected_rows: 0 });
    const { rows } = await p.db.query('SELECT count(*)::int AS n FROM agent_read.order_line_master WHERE shop = $1', [s.shop]);
    expect(rows[0].n).toBe(5000);

    const over = await send(s.shop, many(5001));
    expect(over.status).toBe(400);
    expect(over.json.ok).toBe(false);
    expect(over.json.error).toMatch(/5,?000/);
  });
});

describe('D25: least privilege', () => {
  it('as agent_reader the rows are readable in agent_read.order_line_master, and public.order_line_master is not (42501)', async () => {
    const s = await newShop('d25');
    await upsert(s.shop, [row(s)]);
    const c = await p.db.connect();
    try {
      await c.query('BEGIN');
      await c.query('SET LOCAL ROLE agent_reader');
      const view = await c.query('SELECT barcode, product_name, sku FROM agent_read.order_line_master WHERE shop = $1', [s.shop]);
      expect(view.rows).toEqual([{ barcode: KNOWN, product_name: 'Green tea', sku: 'SKU-1' }]);
      const logView = await c.query('SELECT change_type FROM agent_read.order_line_master_update_logs WHERE shop = $1', [s.shop]);
      expect(logView.rows).toEqual([{ change_type: 'insert' }]);
      await c.query('SAVEPOINT denied');
      const err = await c.query('SELECT * FROM public.order_line_master WHERE shop = $1', [s.shop]).then(
        () => null,
        (e: { code?: string; message?: string }) => e,
      );
      expect(err?.code).toBe('42501');
      expect(err?.message).toMatch(/permission denied/);
      await c.query('ROLLBACK TO SAVEPOINT denied');
      const logErr = await c.query('SELECT * FROM public.order_line_master_update_logs').then(
        () => null,
        (e: { code?: string }) => e,
      );
      expect(logErr?.code).toBe('42501');
    } finally {
      await c.query('ROLLBACK').catch(() => {});
      c.release();
    }
  });
});
