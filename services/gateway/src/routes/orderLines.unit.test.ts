import { describe, expect, it } from 'vitest';
import { validOrderRow } from '@ingest/domain/testing';
import { leaksInternals, postJson, startTestGateway, TEST_INGEST_SECRET, useTestGateway } from '../../testing/testGateway.ts';

// Endpoint 6 (POST /api/order-line-master/bulk-upsert) at the HTTP edge, on buildApp with in-memory
// ports (STYLE.md): the request's shape (spec Errors and Limits, D11), authentication (spec
// Authentication rules 1 and 2) and the command the gateway appends for the decider. A refused request
// appends nothing, so nothing can be applied. The row rules are the decider's
// (packages/domain/src/orders/*.unit.test.ts); the end-to-end cases stay in
// tests/integration/order-lines.int.test.ts.
const gw = useTestGateway();

const ENDPOINT = '/api/order-line-master/bulk-upsert';
const ING = { 'x-ingest-secret': TEST_INGEST_SECRET };
const USER = '0190a000-0000-7000-8000-0000000000e1';

type Answer = Awaited<ReturnType<typeof post>>;

async function post(body: unknown, headers: Record<string, string> = ING, url = gw.url) {
  const r = await postJson(`${url}${ENDPOINT}`, body, headers);
  return { ...r, contentType: r.headers.get('content-type') ?? '' };
}

const row = (over: Record<string, unknown> = {}) =>
  validOrderRow(
    { barcode: '4900000000001', channel_id: '0190a000-0000-7000-8000-0000000000c1', location_id: '0190a000-0000-7000-8000-0000000000a1' },
    over,
  );

/** A 400 in the spec's shape that appended nothing and shows no internals (D11). */
function expectRefused(what: string, r: Answer, status: number, body: unknown): void {
  expect(r.status, `${what}: ${r.text}`).toBe(status);
  expect(r.contentType, what).toMatch(/^application\/json/);
  expect(r.json, what).toEqual(body);
  expect(leaksInternals(r.text), what).toBe(false);
  expect(gw.appended, `${what}: nothing appended`).toEqual([]);
}

describe('endpoint 6: the request shape (spec Errors, D11)', () => {
  it.each([
    ['missing', {}],
    ['empty', { rows: [] }],
    ['a string', { rows: 'rows' }],
    ['an object', { rows: { 0: {} } }],
    ['null', { rows: null }],
  ])('rows %s -> 400 `rows[] required and non-empty`, nothing appended', async (what, rows) => {
    expectRefused(what, await post({ shop: 'a.example', ...rows }), 400, { ok: false, error: 'rows[] required and non-empty' });
  });

  it('shop missing -> 400 `shop required`; shop of the wrong type -> 400 `shop must be string`', async () => {
    expectRefused('no shop', await post({ rows: [row()] }), 400, { ok: false, error: 'shop required' });
    expectRefused('shop 42', await post({ shop: 42, rows: [row()] }), 400, { ok: false, error: 'shop must be string' });
  });

  it.each([
    [{ dry_run: 'yes' }, 'dry_run must be boolean'],
    [{ change_source: 5 }, 'change_source must be string'],
    [{ ingest_run_id: ['run'] }, 'ingest_run_id must be string'],
    [{ idempotency_key: 1 }, 'idempotency_key must be string'],
  ])('a wrongly typed top-level field %j -> 400 naming it, nothing appended', async (extra, error) => {
    expectRefused(JSON.stringify(extra), await post({ shop: 'a.example', rows: [row()], ...extra }), 400, { ok: false, error });
  });

  it('changed_by_user_id that is not a uuid -> 400 naming it, nothing appended', async () => {
    const r = await post({ shop: 'a.example', rows: [row()], changed_by_user_id: 'not-a-uuid' });
    expectRefused('not-a-uuid', r, 400, { ok: false, error: expect.stringContaining('changed_by_user_id') });
  });

  it('changed_by_user_id in the urn:uuid form (which ajv-formats would admit and a PostgreSQL uuid column refuses) -> 400 naming it, never a 500', async () => {
    const r = await post({ shop: 'a.example', rows: [row()], changed_by_user_id: `urn:uuid:${USER}` });
    expectRefused('urn:uuid', r, 400, { ok: false, error: expect.stringContaining('changed_by_user_id') });
  });

  it.each(['{not json', '[]', '"rows"'])(
    'a body that is not a JSON object (%s) -> 400 `invalid JSON body`, nothing appended',
    async (raw) => {
      expectRefused(raw, await post(raw), 400, { ok: false, error: 'invalid JSON body' });
    },
  );
});

describe('endpoint 6: the batch limit (spec Limits)', () => {
  const many = (n: number) => Array.from({ length: n }, (_, i) => row({ line_instance_no: i + 1 }));

  it('5,000 rows are accepted and appended as one command with every row', async () => {
    const r = await post({ shop: 'a.example', rows: many(5000) });
    expect(r.status, r.text.slice(0, 500)).toBe(202);
    expect(gw.appended).toHaveLength(1);
    expect((gw.appended[0]!.payload as { rows: unknown[] }).rows).toHaveLength(5000);
  });

  it('5,001 rows -> 400 naming the limit, nothing appended', async () => {
    const r = await post({ shop: 'a.example', rows: many(5001) });
    expectRefused('5,001 rows', r, 400, { ok: false, error: expect.stringMatching(/5,?000/) });
  });
});

describe('endpoint 6: authentication (spec Authentication rules 1 and 2)', () => {
  it('no x-ingest-secret or a wrong one -> 401 text `unauthorized`, nothing appended', async () => {
    for (const headers of [{}, { 'x-ingest-secret': 'wrong' }] as Array<Record<string, string>>) {
      const r = await post({ shop: 'a.example', rows: [{}] }, headers);
      expect(r.status, JSON.stringify(headers)).toBe(401);
      expect(r.text).toBe('unauthorized');
      expect(r.contentType).toMatch(/^text\/plain/);
    }
    expect(gw.appended).toEqual([]);
  });

  it('no INGEST_SECRET configured -> 503 `INGEST_SECRET not configured`, with or without the header', async () => {
    const nocfg = await startTestGateway({ ingestSecrets: [] });
    try {
      for (const headers of [{}, ING] as Array<Record<string, string>>) {
        const r = await post({ shop: 'a.example', rows: [{}] }, headers, nocfg.url);
        expect(r.status, JSON.stringify(headers)).toBe(503);
        expect(r.json).toEqual({ ok: false, error: 'INGEST_SECRET not configured' });
      }
      expect(nocfg.appended).toEqual([]);
    } finally {
      await nocfg.close();
    }
  });
});

describe('endpoint 6: the command appended for the decider', () => {
  it('without the optional fields: change_source external_app (spec default), the others null, dry_run false, the rows as sent', async () => {
    const rows = [row(), 'not an object', { barcode: 'B' }];
    const r = await post({ shop: 'a.example', rows });
    expect(r.status, r.text).toBe(202);
    expect(gw.appended).toHaveLength(1);
    expect(gw.appended[0]).toMatchObject({ kind: 'order_lines.upsert', shop: 'a.example' });
    expect(gw.appended[0]!.payload).toEqual({
      rows,
      dry_run: false,
      change_source: 'external_app',
      ingest_run_id: null,
      idempotency_key: null,
      changed_by_user_id: null,
      unknown_fields: 'reject',
    });
  });

  it('change_source, ingest_run_id, idempotency_key and changed_by_user_id are carried to the logs, the uuid lower-cased', async () => {
    const r = await post({
      shop: 'a.example',
      rows: [row()],
      change_source: 'pos-sync',
      ingest_run_id: 'run-42',
      idempotency_key: 'idem-42',
      changed_by_user_id: USER.toUpperCase(),
    });
    expect(r.status, r.text).toBe(202);
    expect(gw.appended[0]!.payload).toMatchObject({
      change_source: 'pos-sync',
      ingest_run_id: 'run-42',
      idempotency_key: 'idem-42',
      changed_by_user_id: USER,
    });
  });
});
