import { describe, expect, it } from 'vitest';
import { leaksInternals, postJson, TEST_INGEST_SECRET, useTestGateway, type HttpAnswer as Answer } from '../../testing/testGateway.ts';

// The HTTP edge of the inventory endpoints 3, 4 and 5 and of the admin registry (D14), on buildApp
// with in-memory ports (STYLE.md): request shapes, D11 statuses (top-level problems 400, line
// problems 422 invalid_payload naming the path), the line limit, inventory_as_of (D15b future,
// the business range), the business date of a snapshot (D16) and the payload hash of D19.
// None of these needs Kafka or PostgreSQL: a refused request appends nothing, so nothing is written.
// Moved here from tests/integration/inventory-{available,levels,snapshot,locations}.int.test.ts;
// what those rules do in the projector's SQL stays there.
const gw = useTestGateway();

const LOC = '0190a000-0000-7000-8000-0000000000a1';
const SNAPSHOT = '/api/ingest/inventory-snapshot';
const AVAILABLE = '/api/ingest/inventory-available';
const LEVELS = '/api/inventory-levels/bulk-upsert';

const post = (path: string, body: unknown, headers: Record<string, string> = { 'x-ingest-secret': TEST_INGEST_SECRET }) =>
  postJson(`${gw.url}${path}`, body, headers);

const snapshot = (over: Record<string, unknown> = {}, lines: unknown[] = [{ barcode: 'A', on_hand_qty: 1 }]) =>
  post(SNAPSHOT, { shop: 'edge.example', source_system: 'pos', location_id: LOC, lines, ...over });
const available = (mode: 'absolute' | 'delta', lines: unknown[], over: Record<string, unknown> = {}) =>
  post(AVAILABLE, { shop: 'edge.example', source_system: 'ec', mode, location_id: LOC, lines, ...over });
const levels = (mode: 'absolute' | 'delta', lines: unknown[], over: Record<string, unknown> = {}) =>
  post(LEVELS, { shop: 'edge.example', source_system: 'wms', mode, lines, ...over });

const minutes = (m: number): string => new Date(Date.now() + m * 60_000).toISOString();
const invalidPayload = (error: unknown = expect.any(String)) => ({ ok: false, error_kind: 'invalid_payload', error });

/** A refusal: its status and body, no internals in it, and nothing appended (so nothing can be written). */
function expectRefused(what: string, r: Answer, status: number, body: unknown): void {
  expect(r.status, `${what}: ${r.text.slice(0, 300)}`).toBe(status);
  expect(r.json, what).toEqual(body);
  expect(leaksInternals(r.text), what).toBe(false);
  expect(gw.appended, `${what}: nothing appended`).toEqual([]);
}

/** A time before the business range: 400 when not read as a date-time at all, else 422; either names inventory_as_of. */
function expectEarlyRefused(asOf: string, r: Answer): void {
  expect([400, 422], `${asOf}: ${r.status} ${r.text}`).toContain(r.status);
  expect(r.json, asOf).toMatchObject({ ok: false, error: expect.stringContaining('inventory_as_of') });
  expect(leaksInternals(r.text), asOf).toBe(false);
  expect(gw.appended, asOf).toEqual([]);
}

describe('endpoint 5, inventory-available: request shape (D11)', () => {
  it('bad lines are 422 invalid_payload naming the path; a missing mode or shop is 400', async () => {
    expectRefused(
      'negative',
      await available('absolute', [
        { barcode: 'A', available_qty: 1 },
        { barcode: 'B', available_qty: -1 },
      ]),
      422,
      invalidPayload(expect.stringContaining('lines[1].available_qty')),
    );
    expectRefused(
      'fraction',
      await available('delta', [{ barcode: 'A', available_delta: 1.5 }]),
      422,
      invalidPayload(expect.stringContaining('lines[0].available_delta')),
    );
    expectRefused('absolute field in delta mode', await available('delta', [{ barcode: 'A', available_qty: 1 }]), 422, invalidPayload());
    expectRefused(
      'no mode',
      await post(AVAILABLE, { shop: 'edge.example', source_system: 'x', location_id: LOC, lines: [{ barcode: 'A', available_qty: 1 }] }),
      400,
      { ok: false, error: 'mode required' },
    );
    expectRefused('no shop', await post(AVAILABLE, { source_system: 'x', mode: 'absolute', location_id: LOC, lines: [] }), 400, {
      ok: false,
      error: 'shop required',
    });
  });

  it('regression: an inventory_as_of in year 0000, or whose UTC instant falls before year 0, is answered without a 500 (refused naming inventory_as_of)', async () => {
    // 0000-01-01T00:00:00+01:00 is valid RFC 3339; in UTC it is 23:00 on the last day of year -1.
    // Year 0000 is valid in RFC 3339 (it is 1 BC); PostgreSQL has no year 0 in its input syntax.
    for (const asOf of ['0001-01-01T00:00:00Z', '0000-06-01T00:00:00Z', '0000-01-01T00:00:00+01:00']) {
      expectEarlyRefused(asOf, await available('absolute', [{ barcode: 'A', available_qty: 1 }], { inventory_as_of: asOf }));
    }
  });

  it('the command carries the mode, the location and the lines as sent', async () => {
    const r = await available('delta', [{ barcode: 'A', available_delta: -2 }], { location: undefined });
    expect(r.status, r.text).toBe(202);
    expect(gw.appended).toMatchObject([
      {
        kind: 'inventory.available',
        shop: 'edge.example',
        source_system: 'ec',
        payload: { mode: 'delta', location: { location_id: LOC }, lines: [{ barcode: 'A', available_delta: -2 }] },
      },
    ]);
  });
});

describe('D19 at the edge: the payload hash that tells a reused idempotency_key from a resend', () => {
  const hashOf = async (mode: 'absolute' | 'delta', lines: unknown[], key?: string, send = available) => {
    gw.appended.length = 0;
    const r = await send(mode, lines, key === undefined ? {} : { idempotency_key: key });
    expect(r.status, r.text).toBe(202);
    return (gw.appended[0] as { payload_hash?: string }).payload_hash;
  };

  it('a delta with a key: the same lines give the same hash, other lines another; without a key or in absolute mode there is none', async () => {
    const lines = [
      { barcode: 'A', available_delta: 5 },
      { barcode: 'B', available_delta: 2 },
    ];
    const first = await hashOf('delta', lines, 'evt-1');
    expect(first).toMatch(/^[0-9a-f]{64}$/);
    expect(await hashOf('delta', lines, 'evt-1')).toBe(first);
    // The same content in another key order is the same payload.
    expect(
      await hashOf(
        'delta',
        [
          { available_delta: 5, barcode: 'A' },
          { available_delta: 2, barcode: 'B' },
        ],
        'evt-1',
      ),
    ).toBe(first);
    expect(await hashOf('delta', [{ barcode: 'A', available_delta: 50 }, ...lines.slice(1)], 'evt-1')).not.toBe(first);
    expect(await hashOf('delta', lines)).toBeUndefined();
    expect(await hashOf('absolute', [{ barcode: 'A', available_qty: 3 }], 'k-abs')).toBeUndefined();
    expect(await hashOf('delta', [{ barcode: 'A', location_id: LOC, on_hand_delta: 3 }], 'move-1', levels)).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('endpoint 3, inventory-levels: request shape (D11, D17)', () => {
  it('bad lines are 422 invalid_payload naming the path; top-level problems are 400', async () => {
    const cases: Array<['absolute' | 'delta', unknown[], RegExp]> = [
      [
        'absolute',
        [
          { barcode: 'A', location_id: LOC, on_hand_qty: 1 },
          { barcode: 'A', location_id: LOC, on_hand_qty: -1 },
        ],
        /lines\[1\]\.on_hand_qty/,
      ],
      ['absolute', [{ barcode: 'A', location_id: LOC, available_qty: 2.5 }], /lines\[0\]\.available_qty/],
      ['delta', [{ barcode: 'A', location_id: LOC, on_hand_delta: 0.5 }], /lines\[0\]\.on_hand_delta/],
      // Both location forms on one line, neither, and no quantity at all.
      [
        'absolute',
        [{ barcode: 'A', location_id: LOC, location: { identifier_type: 'pos', identifier_value: 'S1' }, on_hand_qty: 1 }],
        /lines\[0\]/,
      ],
      [
        'absolute',
        [
          { barcode: 'A', location_id: LOC, on_hand_qty: 1 },
          { barcode: 'A', on_hand_qty: 1 },
        ],
        /lines\[1\]/,
      ],
      ['absolute', [{ barcode: 'A', location_id: LOC }], /lines\[0\]/],
    ];
    for (const [mode, lines, path] of cases) {
      expectRefused(JSON.stringify(lines), await levels(mode, lines), 422, invalidPayload(expect.stringMatching(path)));
    }
    expectRefused('no mode', await post(LEVELS, { shop: 'edge.example', source_system: 'x', lines: [] }), 400, {
      ok: false,
      error: 'mode required',
    });
    expectRefused('no shop', await post(LEVELS, { source_system: 'x', mode: 'delta', lines: [] }), 400, {
      ok: false,
      error: 'shop required',
    });
  });

  it('an inventory_as_of more than 5 minutes in the future is 422 invalid_payload', async () => {
    expectRefused(
      'future',
      await levels('delta', [{ barcode: 'A', location_id: LOC, on_hand_delta: 1 }], { inventory_as_of: minutes(10) }),
      422,
      invalidPayload('inventory_as_of is more than 5 minutes in the future'),
    );
  });

  it('a line names its location by location_id or identifier; <field>_qty_delta is read as <field>_delta', async () => {
    const r = await levels('delta', [
      { barcode: 'A', location_id: LOC, on_hand_delta: 1, available_delta: -2 },
      { barcode: 'A', location: { identifier_type: 'wms', identifier_value: 'W1' }, on_hand_qty_delta: 6, available_qty_delta: 2 },
    ]);
    expect(r.status, r.text).toBe(202);
    expect(gw.appended[0]?.payload).toEqual({
      mode: 'delta',
      lines: [
        { barcode: 'A', location: { location_id: LOC }, delta: { on_hand_qty: 1, available_qty: -2 } },
        {
          barcode: 'A',
          location: { location: { identifier_type: 'wms', identifier_value: 'W1' } },
          delta: { on_hand_qty: 6, available_qty: 2 },
        },
      ],
    });
  });
});

describe('endpoint 4, inventory-snapshot: request shape (D11)', () => {
  it('a bad line is 422 invalid_payload naming its path (negative, non-integer, wrong type, missing)', async () => {
    const good = { barcode: 'A', on_hand_qty: 1 };
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ barcode: 'A', on_hand_qty: -1 }, /lines\[3\]\.on_hand_qty/],
      [{ barcode: 'A', on_hand_qty: 1.5 }, /lines\[3\]\.on_hand_qty/],
      [{ barcode: 'A', on_hand_qty: '5' }, /lines\[3\]\.on_hand_qty/],
      [{ barcode: 'A', on_hand_qty: 1, allocated_qty: -2 }, /lines\[3\]\.allocated_qty/],
      [{ barcode: 'A', on_hand_qty: 1, available_qty: 0.5 }, /lines\[3\]\.available_qty/],
      [{ barcode: 'A' }, /lines\[3\]\.on_hand_qty/],
      [{ on_hand_qty: 1 }, /lines\[3\]\.barcode/],
    ];
    for (const [bad, path] of cases) {
      expectRefused(
        JSON.stringify(bad),
        await snapshot({}, [good, good, good, bad, { barcode: 'B', on_hand_qty: -9 }]),
        422,
        invalidPayload(expect.stringMatching(path)),
      );
    }
  });

  it('a blank shop is 400 "shop required"', async () => {
    expectRefused('blank shop', await snapshot({ shop: '   ' }), 400, { ok: false, error: 'shop required' });
  });

  it('missing shop is 400 "shop required"; missing lines or source_system is 400 too', async () => {
    expectRefused('no shop', await snapshot({ shop: undefined }), 400, { ok: false, error: 'shop required' });
    expectRefused('no lines', await post(SNAPSHOT, { shop: 'edge.example', source_system: 'pos', location_id: LOC }), 400, {
      ok: false,
      error: 'lines required',
    });
    expectRefused('no source_system', await post(SNAPSHOT, { shop: 'edge.example', location_id: LOC, lines: [] }), 400, {
      ok: false,
      error: 'source_system required',
    });
  });

  it('regression: a lone UTF-16 surrogate escape in a string (\\ud800) is refused with 400, never a 500', async () => {
    const text = JSON.stringify({
      shop: 'edge.example',
      source_system: 'SURR',
      location_id: LOC,
      lines: [{ barcode: 'A', on_hand_qty: 1 }],
    });
    for (const raw of [text.replace('"barcode":"A"', '"barcode":"A\\ud800"'), text.replace('"SURR"', '"pos\\udc00"')]) {
      const r = await post(SNAPSHOT, raw);
      expect(r.status, `${raw}: ${r.status} ${r.text}`).toBe(400);
      expect(r.json).toEqual({ ok: false, error: expect.any(String) });
      expect(gw.appended).toEqual([]);
    }
  });
});

describe('inventory_as_of at the edge (D15b, D16, business range)', () => {
  it('more than 5 minutes in the future is 422 invalid_payload and appends nothing; within 5 minutes is accepted', async () => {
    expectRefused(
      'future',
      await snapshot({ inventory_as_of: minutes(10) }),
      422,
      invalidPayload('inventory_as_of is more than 5 minutes in the future'),
    );
    const ok = await snapshot({ inventory_as_of: minutes(2) });
    expect(ok.status, ok.text).toBe(202);
    expect(gw.appended).toHaveLength(1);
  });

  it('from 2000-01-01T00:00:00Z on is accepted and dated on its business date; earlier is 422, in UTC whatever the offset or the business date', async () => {
    const ok = await snapshot({ inventory_as_of: '2000-01-01T00:00:00Z' });
    expect(ok.status, ok.text).toBe(202);
    expect(gw.appended[0]).toMatchObject({ inventory_as_of: '2000-01-01T00:00:00.000Z', payload: { snapshot_date: '2000-01-01' } });
    gw.appended.length = 0;
    // 1999-12-31T15:00:00Z is 2000-01-01 in Tokyo, still before the range.
    for (const asOf of [
      '1999-12-31T15:00:00Z',
      '1999-12-31T23:59:59.999Z',
      '1970-01-01T00:00:00Z',
      '1900-06-01T00:00:00Z',
      '1000-01-01T00:00:00Z',
    ]) {
      expectRefused(asOf, await snapshot({ inventory_as_of: asOf }), 422, invalidPayload('inventory_as_of is before 2000-01-01T00:00:00Z'));
    }
  });

  it("regression: an inventory_as_of before year 1000 (0001-01-01T00:00:00Z is Go's zero time) is refused (4xx naming inventory_as_of), never a 500", async () => {
    for (const asOf of ['0001-01-01T00:00:00Z', '0999-06-01T00:00:00Z'])
      expectEarlyRefused(asOf, await snapshot({ inventory_as_of: asOf }));
  });

  it("an impossible or unparseable inventory_as_of is the client's fault: 400 or 422, never 500", async () => {
    for (const asOf of ['2026-02-30T00:00:00Z', '2026-06-30T23:59:60Z', 'yesterday', '2026-11-21']) {
      const r = await snapshot({ inventory_as_of: asOf });
      expect([400, 422], `${asOf}: ${r.status} ${r.text}`).toContain(r.status);
      expect(gw.appended, asOf).toEqual([]);
    }
  });

  it('D16: the snapshot_date is the business date of inventory_as_of in Asia/Tokyo, an offset honoured', async () => {
    const dates: string[] = [];
    for (const asOf of ['2026-11-20T14:59:59.000Z', '2026-11-20T15:00:00.000Z', '2026-11-20T20:00:00.000Z', '2026-11-21T08:00:00+09:00']) {
      gw.appended.length = 0;
      const r = await snapshot({ inventory_as_of: asOf });
      expect(r.status, r.text).toBe(202);
      dates.push((gw.appended[0]?.payload as { snapshot_date: string }).snapshot_date);
    }
    expect(dates).toEqual(['2026-11-20', '2026-11-21', '2026-11-21', '2026-11-21']);
  });
});

describe('the line limit (D11): 10,000 lines are accepted, 10,001 are 422 invalid_payload naming the limit', () => {
  const over = (line: (i: number) => Record<string, unknown>) => Array.from({ length: 10_001 }, (_, i) => line(i));

  it.each([
    ['snapshot', (lines: unknown[]) => snapshot({}, lines), (i: number) => ({ barcode: `X${i}`, on_hand_qty: 1 })],
    ['available', (lines: unknown[]) => available('delta', lines), (i: number) => ({ barcode: `X${i}`, available_delta: 1 })],
    ['levels', (lines: unknown[]) => levels('absolute', lines), (i: number) => ({ barcode: `X${i}`, location_id: LOC, on_hand_qty: 1 })],
  ] as const)('%s', async (what, send, line) => {
    const lines = over(line);
    const r = await send(lines);
    expectRefused(what, r, 422, invalidPayload(expect.stringMatching(/10,?000/)));
    expect(r.json.error).toMatch(/lines/);
    const max = await send(lines.slice(0, 10_000));
    expect(max.status, max.text.slice(0, 300)).toBe(202);
    expect((gw.appended[0]?.payload as { lines: unknown[] }).lines).toHaveLength(10_000);
  });
});

describe('location reference of endpoints 4 and 5 (D11, D14)', () => {
  it('both location_id and location is 422 invalid_payload; neither is 400 "location_id or location required"', async () => {
    const both = { location_id: LOC, location: { identifier_type: 'pos', identifier_value: 'MAIN' } };
    expectRefused('snapshot both', await snapshot(both), 422, invalidPayload());
    expectRefused('available both', await available('absolute', [{ barcode: 'B1', available_qty: 1 }], both), 422, invalidPayload());
    const neither = { ok: false, error: 'location_id or location required' };
    expectRefused('snapshot neither', await snapshot({ location_id: undefined }), 400, neither);
    expectRefused(
      'available neither',
      await available('absolute', [{ barcode: 'B1', available_qty: 1 }], { location_id: undefined }),
      400,
      neither,
    );
  });
});

describe('POST /api/admin/locations and /api/admin/channels at the edge (D14)', () => {
  it('both admin routes require x-ingest-secret: missing or wrong is 401 "unauthorized" and appends nothing', async () => {
    for (const headers of [{}, { 'x-ingest-secret': 'wrong' }] as Array<Record<string, string>>) {
      const l = await post('/api/admin/locations', { shop: 'edge.example', locations: [{ name: 'X' }] }, headers);
      expect([l.status, l.text]).toEqual([401, 'unauthorized']);
      const c = await post('/api/admin/channels', { shop: 'edge.example', channels: [{ name: 'X' }] }, headers);
      expect([c.status, c.text]).toEqual([401, 'unauthorized']);
    }
    expect(gw.appended).toEqual([]);
  });

  it('regression: a lone UTF-16 surrogate escape (\\ud800) in a name or identifier is refused with 400, never a 500', async () => {
    const name = `{"shop":"edge.example","locations":[{"name":"Store \\ud800"}]}`;
    const ident = `{"shop":"edge.example","locations":[{"name":"Store","identifiers":[{"identifier_type":"pos","identifier_value":"S\\udc00"}]}]}`;
    for (const raw of [name, ident]) {
      const r = await post('/api/admin/locations', raw);
      expect(r.status, `${raw}: ${r.status} ${r.text}`).toBe(400);
      expect(gw.appended).toEqual([]);
    }
  });

  it('a given location_id is kept (lower case), an omitted one is chosen; the command carries the identifiers as sent', async () => {
    const given = '0190A000-0000-7000-8000-0000000000B1';
    const r = await post('/api/admin/locations', {
      shop: 'edge.example',
      locations: [
        { location_id: given, name: 'Main', identifiers: [{ identifier_type: 'pos', identifier_value: 'S-001' }] },
        { name: 'No identifiers' },
      ],
    });
    expect(r.status, r.text).toBe(202);
    const locations = (gw.appended[0]?.payload as { locations: Array<{ location_id: string }> }).locations;
    expect(locations).toMatchObject([
      { location_id: given.toLowerCase(), name: 'Main', identifiers: [{ identifier_type: 'pos', identifier_value: 'S-001' }] },
      {
        location_id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
        name: 'No identifiers',
      },
    ]);
  });
});
