import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validOrderRow } from '@ingest/domain/testing';
import { INGEST_SECRET, post, startPipeline, type HttpResult, type TestPipeline } from '../support/pipeline.ts';

// Endpoint 6 of the spec (order lines bulk upsert) end to end, one or two cases per wiring path:
// HTTP -> Kafka -> projector -> PostgreSQL -> reply, then the rows and logs as agent_read shows them
// (D6b, D21, D22, D23, D24, D25, D27), and what only PostgreSQL can show: a registry row of another
// shop, amounts stored exactly (D20a), stored rows read back as identical (D21), 5,000 rows in one
// command, the grants. The rule matrices are tested without I/O: the row rules (D20, D20a, D27) in
// packages/domain/src/orders/validateRow.unit.test.ts, registry and product checks, change types,
// D6a batches and the dry run's answer (D21, D22) in decideOrderLines.unit.test.ts, and the request's
// shape, limit, authentication and command (spec Errors and Limits, D11) at the HTTP edge in
// services/gateway/src/routes/orderLines.unit.test.ts.

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

describe('POST /api/order-line-master/bulk-upsert: response, storage and logs', () => {
  it('valid rows are stored while others are rejected: HTTP 200, ok true, the counts, errors, warnings and adapter_version; the view has product_name and sku NULL for a barcode not in the master (spec rule 3, D6b, D23, D27)', async () => {
    const s = await newShop('mixed');
    const r = await send(s.shop, [
      row(s, { line_instance_no: 1 }),
      row(s, { line_instance_no: 2, tax_rate: 7 }),
      row(s, { line_instance_no: 3, barcode: 'NOT-IN-MASTER' }),
      row(s, { line_instance_no: 4, location_id: randomUUID() }),
      row(s, { line_instance_no: 5 }),
      row(s, { line_instance_no: 6, quantity: 3 }),
    ]);
    expect(r.status).toBe(200);
    expect(r.json).toEqual({
      ok: true,
      dry_run: false,
      accepted_rows: 3,
      inserted_rows: 3,
      updated_rows: 0,
      rejected_rows: 3,
      warnings_count: 1,
      errors: [
        problem(1, 'tax_rate', 'tax_rate_out_of_range'),
        problem(3, 'location_id', 'location_not_found'),
        // D27: the gateway's unknown_fields reject reaches the projector through the command log.
        { row_index: 5, field: 'quantity', code: 'unknown_field', message: 'quantity is not allowed' },
      ],
      warnings: [problem(2, 'barcode', 'product_not_in_master_warning')],
      adapter_version: ADAPTER_VERSION,
    });
    expect(ADAPTER_VERSION).toMatch(/^\d+\.\d+\.\d+/);
    const stored = await lines(s.shop);
    // The view joins the product master: product_name and sku are NULL for a barcode not in it.
    expect(stored.map((l) => [l.line_instance_no, l.barcode, l.product_name, l.sku])).toEqual([
      [1, KNOWN, 'Green tea', 'SKU-1'],
      [3, 'NOT-IN-MASTER', null, null],
      [5, KNOWN, 'Green tea', 'SKU-1'],
    ]);
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

  it('amounts at the edges of the 0.01 tolerance and a tax_rate of 0 or 1 are stored exactly as sent (D20a)', async () => {
    const s = await newShop('amount');
    // tax 0 and net excl. = net incl., so only the first identity is at its edge.
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
      a(1, 100.0, 0.0, 99.99), // exactly 0.01
      a(2, 100.0, 0.0, 100.01), // -0.01
      a(3, 0.3, 0.1, 0.2), // 0.3 - 0.1 is 0.19999999999999998 in binary floating point
      a(4, 100.01, 0, 100), // 100.01 - 100 is 0.010000000000005116 in binary floating point
      a(5, 1.005, 0, 0.995), // exactly 0.01
      row(s, { line_instance_no: 6, tax_rate: 1 }),
    ]);
    expect(b).toMatchObject({ accepted_rows: 6, inserted_rows: 6, rejected_rows: 0, errors: [] });
    const stored = await lines(s.shop);
    expect(
      stored.map((l) => [l.line_instance_no, l.gross_amount_taxincl, l.discount_amount_taxincl, l.net_amount_taxincl, l.tax_rate]),
    ).toEqual([
      [1, 100, 0, 99.99, 0],
      [2, 100, 0, 100.01, 0],
      [3, 0.3, 0.1, 0.2, 0],
      [4, 100.01, 0, 100, 0],
      [5, 1.005, 0, 0.995, 0],
      [6, 1100, 100, 1000, 1],
    ]);
  });

  it("location_not_found and channel_not_found: a location or a channel of another shop is not this shop's (spec rule 5)", async () => {
    const s = await newShop('reg');
    const other = await newShop('reg-other');
    const b = await upsert(s.shop, [
      row(s, { line_instance_no: 1, location_id: other.loc }),
      row(s, { line_instance_no: 2, channel_id: other.ch }),
      row(s, { line_instance_no: 3 }),
    ]);
    expect(b).toMatchObject({ accepted_rows: 1, inserted_rows: 1, rejected_rows: 2 });
    expect(b.errors).toEqual([problem(0, 'location_id', 'location_not_found'), problem(1, 'channel_id', 'channel_not_found')]);
    expect((await lines(s.shop)).map((l) => l.line_instance_no)).toEqual([3]);
  });

  it('resend of identical rows: the stored rows read back as identical, so accepted, inserted 0, updated 0, no new log rows and the rows untouched (D21)', async () => {
    const s = await newShop('resend');
    const rows = [
      row(s, { line_instance_no: 1 }),
      row(s, { line_instance_no: 2, refund_amount: 10, refunded_at: '2026-05-02T00:00:00Z', refund_reason: 'broken', tax_rate: 0.08 }),
    ];
    expect(await upsert(s.shop, rows)).toMatchObject({ accepted_rows: 2, inserted_rows: 2, updated_rows: 0 });
    const before = await lines(s.shop);
    expect(before.map((l) => [l.line_instance_no, l.refund_amount, l.refunded_at, l.refund_reason, l.tax_rate])).toEqual([
      [1, 0, null, null, 0.1],
      [2, 10, new Date('2026-05-02T00:00:00.000Z'), 'broken', 0.08],
    ]);
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

  it('update log: a changed customer_id is an update with before_data, after_data and changed_fields [customer_id]; the logs carry the request change_source, ingest_run_id, idempotency_key and changed_by_user_id, or the defaults', async () => {
    const s = await newShop('update');
    const user = randomUUID();
    await upsert(s.shop, [row(s)]);
    const b = await upsert(s.shop, [row(s, { customer_id: 'C-2' })], {
      change_source: 'pos-sync',
      ingest_run_id: 'run-42',
      idempotency_key: 'idem-42',
      changed_by_user_id: user,
    });
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
      change_source: 'pos-sync',
      ingest_run_id: 'run-42',
      idempotency_key: 'idem-42',
      changed_by_user_id: user,
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

  it('dry_run (D22): the same body a real run gives, dry_run echoed, as_of added, and nothing written or appended: no rows, no logs, no outbox rows, no result', async () => {
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
    // A dry run is never appended, so the projector stores no result and writes no outbox row for it.
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
    // D6a: line 3 inserted then updated in the same command, logged in request order.
    const commandLogs = (await logs(s.shop)).filter((l) => l.command_id === realResults[0].command_id);
    expect(commandLogs.map((l) => [l.log_seq, l.line_instance_no, l.change_type])).toEqual([
      [0, 2, 'update'],
      [1, 3, 'insert'],
      [2, 4, 'insert'],
      [3, 3, 'update'],
    ]);
  });

  it('5,000 rows, the limit, are accepted (200) and stored by one command', async () => {
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
