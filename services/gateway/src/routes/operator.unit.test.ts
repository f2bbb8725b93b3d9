import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pool } from '@ingest/db';
import { ERROR_CODE_HEADER } from '../errors/catalog.ts';
import { decodeCursor } from './operatorQuery.ts';
import {
  fetchAnswer,
  getAnswer,
  postJson,
  startTestGateway,
  TEST_INGEST_SECRET,
  useTestGateway,
  type TestGateway,
} from '../../testing/testGateway.ts';

// The operator API at the buildApp tier (docs/api.md "Operator API"): its refusals in the spec's
// shapes (401 text, 400 and 404 `{ok:false,error}` with their codes) before anything is resolved.
// What the actions do is the integration tier's (tests/integration/operator-api.int.test.ts).
const g = useTestGateway();
const AUTH = { 'x-ingest-secret': TEST_INGEST_SECRET };
const ID = '0194f3a2-5c1e-7d4b-9a6f-2b8c4d6e8f01';
const list = (query = '', headers: Record<string, string> = AUTH) => getAnswer(`${g.url}/api/admin/commands${query}`, headers);
const act = (verb: 'retry' | 'skip', body?: unknown, id = ID, headers: Record<string, string> = AUTH) =>
  body === undefined
    ? fetchAnswer(`${g.url}/api/admin/parked/${id}/${verb}`, { method: 'POST', headers })
    : postJson(`${g.url}/api/admin/parked/${id}/${verb}`, body, headers);

describe('operator API credentials', () => {
  it('answers 401 `unauthorized` without the ingest secret or with another one, on every route', async () => {
    const credentials: Array<Record<string, string>> = [{}, { 'x-ingest-secret': 'wrong' }, { 'x-cron-secret': 'c' }];
    for (const headers of credentials) {
      for (const answer of [
        await list('', headers),
        await act('retry', {}, ID, headers),
        await act('skip', { reason: 'r' }, ID, headers),
      ]) {
        expect([answer.status, answer.text, answer.headers.get(ERROR_CODE_HEADER)]).toEqual([401, 'unauthorized', 'unauthorized']);
      }
    }
  });

  it('answers 503 when no ingest secret is configured', async () => {
    const closed = await startTestGateway({ ingestSecrets: [] });
    try {
      const r = await getAnswer(`${closed.url}/api/admin/commands`, AUTH);
      expect([r.status, r.json]).toEqual([503, { ok: false, error: 'INGEST_SECRET not configured' }]);
    } finally {
      await closed.close();
    }
  });
});

describe('GET /api/admin/commands', () => {
  it.each([
    ['?status=done', 'status must be one of parked, failed, pending'],
    ['?limit=0', 'limit must be an integer from 1 to 500'],
    ['?limit=501', 'limit must be an integer from 1 to 500'],
    ['?shop=', 'shop must not be blank'],
    ['?status=parked&status=failed', 'status must be given once'],
    ['?page=2', 'page is not allowed'],
    ['?cursor=zz', 'cursor is invalid'],
  ])('refuses %s with 400 naming the parameter', async (query, error) => {
    const r = await list(query);
    expect([r.status, r.json, r.headers.get(ERROR_CODE_HEADER)]).toEqual([400, { ok: false, error }, 'invalid_header']);
  });

  it('answers an empty page with no next cursor', async () => {
    const r = await list('?status=failed&shop=a.example');
    expect([r.status, r.json]).toEqual([200, { ok: true, status: 'failed', shop: 'a.example', commands: [], next_cursor: null }]);
  });
});

describe('POST /api/admin/parked/{command_id}/retry and /skip', () => {
  it.each([
    ['skip', undefined, 'invalid JSON body'],
    ['skip', '{', 'invalid JSON body'],
    ['skip', [], 'invalid JSON body'],
    ['skip', {}, 'reason required'],
    ['skip', { reason: ' \n' }, 'reason required'],
    ['skip', { reason: 'x'.repeat(1001) }, 'reason must be at most 1000 characters'],
    ['skip', { reason: 'r', hold: 'yes' }, 'hold must be boolean'],
    ['skip', { reason: 'r', force: true }, 'force is not allowed'],
    ['retry', { reason: '' }, 'reason required'],
    ['retry', { reason: 7 }, 'reason must be string'],
    ['retry', { hold: true }, 'hold is not allowed'],
  ] as const)('%s with body %j: 400 %s', async (verb, body, error) => {
    const r = await act(verb, body);
    expect([r.status, r.json]).toEqual([400, { ok: false, error }]);
  });

  it('answers 404 for a command that is not open-parked (here: none is), whatever the case of its id, and for a non-id', async () => {
    for (const answer of [
      await act('retry'),
      await act('retry', {}),
      await act('retry', { reason: 'fixed' }, ID.toUpperCase()),
      await act('skip', { reason: 'bad date', hold: true }),
      await act('skip', { reason: 'bad date' }, 'not-a-command'),
    ]) {
      expect([answer.status, answer.json, answer.headers.get(ERROR_CODE_HEADER)]).toEqual([
        404,
        { ok: false, error: 'parked command not found' },
        'not_found',
      ]);
    }
  });

  it('refuses a body over 16 KiB with 413', async () => {
    const r = await act('skip', { reason: 'r', pad: 'x'.repeat(20_000) });
    expect([r.status, r.json]).toEqual([413, { ok: false, error: 'request body too large' }]);
  });
});

describe('paging at the HTTP tier', () => {
  let paged: TestGateway;
  const asked: unknown[][] = [];
  beforeAll(async () => {
    // The parked ledger's page answers as many rows as asked (limit + 1): there is always a next page.
    const pool = {
      query: async (sql: string, params: unknown[] = []) => {
        if (!/FROM agent_runtime\.parked_commands WHERE/.test(sql)) return { rows: [], rowCount: 0 };
        asked.push(params);
        const rows = Array.from({ length: Number(params[0]) }, (_, i) => ({
          command_id: `0194f3a2-5c1e-7d4b-9a6f-2b8c4d6e8f${String(i).padStart(2, '0')}`,
          shop: 'a.example',
          kind: 'products.upsert',
          kafka_topic: 'ingest.commands.v1',
          kafka_partition: 1,
          kafka_offset: 100 + i,
          error: i === 0 ? 'boom' : 'waiting behind parked command x',
          attempts: i === 0 ? 3 : 0,
          behind: i === 0 ? null : '0194f3a2-5c1e-7d4b-9a6f-2b8c4d6e8f00',
          parked_at: new Date('2026-11-23T01:02:03.000Z'),
        }));
        return { rows, rowCount: rows.length };
      },
    } as unknown as Pool;
    paged = await startTestGateway({}, { pool });
  });
  afterAll(() => paged?.close());

  it('returns `limit` commands and a cursor after the last one, which the next request resumes from', async () => {
    const first = await getAnswer(`${paged.url}/api/admin/commands?limit=2`, AUTH);
    expect(first.status).toBe(200);
    expect(first.json.commands).toHaveLength(2);
    expect(first.json.commands[0]).toEqual({
      command_id: '0194f3a2-5c1e-7d4b-9a6f-2b8c4d6e8f00',
      shop: 'a.example',
      kind: 'products.upsert',
      status: 'parked',
      error: 'boom',
      position: { topic: 'ingest.commands.v1', partition: 1, offset: 100 },
      since: '2026-11-23T01:02:03.000Z',
      waiting_behind: null,
      attempts: 3,
    });
    expect(decodeCursor(first.json.next_cursor)).toEqual({
      status: 'parked',
      shop: null,
      key: { shop: 'a.example', kafka_topic: 'ingest.commands.v1', kafka_partition: 1, kafka_offset: 101 },
    });
    const second = await getAnswer(`${paged.url}/api/admin/commands?limit=2&cursor=${first.json.next_cursor}`, AUTH);
    expect(second.status).toBe(200);
    // One more than the limit asked; the page's key as parameters, never an OFFSET.
    expect(asked).toEqual([[3], [3, 'a.example', 'ingest.commands.v1', 1, 101]]);
  });
});
