import { describe, expect, it } from 'vitest';
import { decodeCursor, encodeCursor, LIST_LIMIT, parseCommandListQuery, type Cursor } from './operatorQuery.ts';

// GET /api/admin/commands's query (docs/api.md "Operator API"): every bad value is a 400 naming
// it, and a cursor is opaque, round-trips exactly, and is only good for the query that gave it.
const PARKED: Cursor = {
  status: 'parked',
  shop: null,
  key: { shop: 'a.example', kafka_topic: 'ingest.commands.v1', kafka_partition: 2, kafka_offset: 1841 },
};
const FAILED: Cursor = {
  status: 'failed',
  shop: 'a.example',
  key: { at: '2026-11-23T01:02:03.123456Z', command_id: '0194f3a2-5c1e-7d4b-9a6f-2b8c4d6e8f01' },
};

describe('parseCommandListQuery', () => {
  it('defaults to the parked commands of every shop, 50 a page, from the start', () => {
    expect(parseCommandListQuery({})).toEqual({ ok: true, value: { shop: null, status: 'parked', limit: 50, after: null } });
    expect(LIST_LIMIT).toEqual({ default: 50, max: 500 });
  });

  it('reads shop (trimmed), status, limit and a cursor of the same query', () => {
    const cursor = encodeCursor(FAILED);
    expect(parseCommandListQuery({ shop: ' a.example ', status: 'failed', limit: '500', cursor })).toEqual({
      ok: true,
      value: { shop: 'a.example', status: 'failed', limit: 500, after: FAILED },
    });
    expect(parseCommandListQuery({ status: 'pending', limit: '1' })).toMatchObject({ ok: true, value: { status: 'pending', limit: 1 } });
  });

  it.each([
    [{ status: 'done' }, 'status must be one of parked, failed, pending'],
    [{ status: '' }, 'status must be one of parked, failed, pending'],
    [{ limit: '0' }, 'limit must be an integer from 1 to 500'],
    [{ limit: '501' }, 'limit must be an integer from 1 to 500'],
    [{ limit: '1.5' }, 'limit must be an integer from 1 to 500'],
    [{ limit: '-1' }, 'limit must be an integer from 1 to 500'],
    [{ limit: '1e2' }, 'limit must be an integer from 1 to 500'],
    [{ limit: '' }, 'limit must be an integer from 1 to 500'],
    [{ shop: '  ' }, 'shop must not be blank'],
    [{ shop: 'x'.repeat(256) }, 'shop must be at most 255 characters'],
    // PostgreSQL text cannot hold NUL: the database would refuse the query (a 500), so the gateway does (400).
    [{ shop: 'a\u0000b' }, 'shop must not contain NUL (\\u0000)'],
    [{ offset: '10' }, 'offset is not allowed'],
    [{ status: ['parked', 'failed'] }, 'status must be given once'],
    [{ shop: { a: '1' } }, 'shop must be given once'],
    [{ cursor: 'not a cursor' }, 'cursor is invalid'],
    [{ status: 'pending', cursor: encodeCursor(FAILED) }, 'cursor belongs to another status or shop'],
    [{ status: 'failed', cursor: encodeCursor(FAILED) }, 'cursor belongs to another status or shop'],
    [{ shop: 'b.example', status: 'failed', cursor: encodeCursor(FAILED) }, 'cursor belongs to another status or shop'],
  ])('refuses %j: %s', (query, error) => {
    expect(parseCommandListQuery(query)).toEqual({ ok: false, error });
  });
});

describe('cursors', () => {
  it('round-trip exactly, as URL-safe text', () => {
    for (const c of [PARKED, FAILED, { ...FAILED, status: 'pending' as const, shop: null }]) {
      const text = encodeCursor(c);
      expect(text).toMatch(/^[A-Za-z0-9_-]+$/);
      expect(decodeCursor(text)).toEqual(c);
    }
  });

  it('refuse anything this gateway did not write', () => {
    const forge = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const parked = { v: 1, s: 'parked', h: null, k: ['a', 't', 0, 1] };
    const failed = { v: 1, s: 'failed', h: null, k: ['2026-11-23T01:02:03.123456Z', FAILED.key.command_id] };
    expect(decodeCursor(forge(parked))).not.toBeNull();
    expect(decodeCursor(forge(failed))).not.toBeNull();
    for (const bad of [
      { ...parked, v: 2 },
      { ...parked, s: 'done' },
      { ...parked, h: 1 },
      { ...parked, k: ['a', 't', 0] },
      { ...parked, k: ['a', 't', -1, 1] },
      { ...parked, k: ['a', 't', 0, 1.5] },
      { ...parked, k: ['a', 't', 0, '1'] },
      { ...failed, k: ['2026-11-23T01:02:03.123Z', FAILED.key.command_id] },
      { ...failed, k: ['2026-11-23T01:02:03.123456Z', 'x'] },
      { ...failed, k: "'; DROP TABLE x; --" },
      { ...parked, k: ['a\u0000', 't', 0, 1] },
      { ...parked, h: 'a\u0000' },
      [1, 2],
      null,
      'text',
    ])
      expect(decodeCursor(forge(bad)), JSON.stringify(bad)).toBeNull();
    expect(decodeCursor('')).toBeNull();
    expect(decodeCursor('%%%')).toBeNull();
    expect(decodeCursor(Buffer.from('{not json').toString('base64url'))).toBeNull();
    expect(decodeCursor('A'.repeat(4096))).toBeNull();
  });
});
