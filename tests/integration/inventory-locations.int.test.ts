import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPipeline, type TestPipeline } from '../support/pipeline.ts';
import {
  INVENTORY_ENV,
  available,
  levelRows,
  levels,
  newProducts,
  registerChannels,
  registerLocations,
  snapshot,
  uniqueShop,
  UUID_RE,
} from '../support/inventory.ts';

// D14: the locations and channels registry (through the command log, D1) and how the inventory
// endpoints resolve a location reference in PostgreSQL (spec: Location reference). The decisions
// given the matches (422 location_unresolved / location_ambiguous) are the deciders'
// (packages/domain/src/inventory/*.unit.test.ts, registry/decideRegistry.unit.test.ts); auth and
// request shapes are the gateway's (services/gateway/src/routes/inventoryEdge.unit.test.ts).
let p: TestPipeline;
beforeAll(async () => {
  p = await startPipeline({ env: INVENTORY_ENV });
});
afterAll(async () => p?.stop());

const snap = (shop: string, where: Record<string, unknown>, lines: unknown[] = [{ barcode: 'B1', on_hand_qty: 3 }]) =>
  snapshot(p, { shop, source_system: 'pos', ...where, lines });

describe('POST /api/admin/locations and /api/admin/channels (D14)', () => {
  it('keeps a given location_id, chooses one when omitted, and answers {ok, shop, locations:[{location_id, name, identifiers}]}', async () => {
    const shop = uniqueShop('reg');
    const given = randomUUID();
    const r = await registerLocations(p, shop, [
      { location_id: given, name: 'Main store', identifiers: [{ identifier_type: 'pos_store_code', identifier_value: 'S-001' }] },
      {
        name: 'Warehouse',
        identifiers: [
          { identifier_type: 'wms', identifier_value: 'WH-1' },
          { identifier_type: 'pos_store_code', identifier_value: 'S-900' },
        ],
      },
      { name: 'No identifiers' },
    ]);
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({
      ok: true,
      shop,
      locations: [
        { location_id: given, name: 'Main store', identifiers: [{ identifier_type: 'pos_store_code', identifier_value: 'S-001' }] },
        {
          location_id: expect.stringMatching(UUID_RE),
          name: 'Warehouse',
          identifiers: [
            { identifier_type: 'wms', identifier_value: 'WH-1' },
            { identifier_type: 'pos_store_code', identifier_value: 'S-900' },
          ],
        },
        { location_id: expect.stringMatching(UUID_RE), name: 'No identifiers', identifiers: [] },
      ],
    });
    const chosen = r.json.locations.map((l: { location_id: string }) => l.location_id);
    expect(new Set(chosen).size).toBe(3);

    const { rows } = await p.db.query('SELECT location_id, shop, name FROM sot.locations WHERE shop = $1 ORDER BY name', [shop]);
    expect(rows).toEqual([
      { location_id: given, shop, name: 'Main store' },
      { location_id: chosen[2], shop, name: 'No identifiers' },
      { location_id: chosen[1], shop, name: 'Warehouse' },
    ]);
    const ids = await p.db.query(
      'SELECT location_id, identifier_type, identifier_value FROM sot.location_identifiers WHERE shop = $1 ORDER BY identifier_value',
      [shop],
    );
    expect(ids.rows).toEqual([
      { location_id: given, identifier_type: 'pos_store_code', identifier_value: 'S-001' },
      { location_id: chosen[1], identifier_type: 'pos_store_code', identifier_value: 'S-900' },
      { location_id: chosen[1], identifier_type: 'wms', identifier_value: 'WH-1' },
    ]);
  });

  it('keeps a given channel_id, chooses one when omitted, and answers {ok, shop, channels:[{channel_id, name}]}', async () => {
    const shop = uniqueShop('chan');
    const given = randomUUID();
    const r = await registerChannels(p, shop, [{ channel_id: given, name: 'Online' }, { name: 'Marketplace' }]);
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({
      ok: true,
      shop,
      channels: [
        { channel_id: given, name: 'Online' },
        { channel_id: expect.stringMatching(UUID_RE), name: 'Marketplace' },
      ],
    });
    expect(r.json.channels[1].channel_id).not.toBe(given);
    const { rows } = await p.db.query('SELECT channel_id, shop, name FROM sot.channels WHERE shop = $1 ORDER BY name', [shop]);
    expect(rows).toEqual([
      { channel_id: r.json.channels[1].channel_id, shop, name: 'Marketplace' },
      { channel_id: given, shop, name: 'Online' },
    ]);
  });

  it('registering the same location_id again renames it and replaces its identifiers', async () => {
    const shop = uniqueShop('rereg');
    const id = randomUUID();
    expect(
      (
        await registerLocations(p, shop, [
          { location_id: id, name: 'Old', identifiers: [{ identifier_type: 't', identifier_value: 'old' }] },
        ])
      ).status,
    ).toBe(200);
    const r = await registerLocations(p, shop, [
      { location_id: id, name: 'New', identifiers: [{ identifier_type: 't', identifier_value: 'new' }] },
    ]);
    expect(r.status, r.text).toBe(200);
    const { rows } = await p.db.query('SELECT name FROM sot.locations WHERE location_id = $1', [id]);
    expect(rows).toEqual([{ name: 'New' }]);
    const idents = await p.db.query('SELECT identifier_value FROM sot.location_identifiers WHERE location_id = $1', [id]);
    expect(idents.rows).toEqual([{ identifier_value: 'new' }]);
  });

  it('a location_id that belongs to another shop cannot be registered again by a different shop', async () => {
    const id = randomUUID();
    const a = uniqueShop('owner');
    expect((await registerLocations(p, a, [{ location_id: id, name: 'Mine' }])).status).toBe(200);
    const r = await registerLocations(p, uniqueShop('thief'), [{ location_id: id, name: 'Stolen' }]);
    expect(r.status, r.text).toBe(422);
    expect(r.json).toMatchObject({ ok: false, error_kind: 'invalid_payload' });
    const { rows } = await p.db.query('SELECT shop, name FROM sot.locations WHERE location_id = $1', [id]);
    expect(rows).toEqual([{ shop: a, name: 'Mine' }]);
  });
});

describe('location resolution on the inventory endpoints (D14, D11)', () => {
  let shop: string;
  let other: string;
  let mainId: string;
  let secondId: string;
  let otherShopLocation: string;
  beforeAll(async () => {
    shop = uniqueShop('resolve');
    other = uniqueShop('resolve-other');
    const r = await registerLocations(p, shop, [
      {
        name: 'Main',
        identifiers: [
          { identifier_type: 'pos', identifier_value: 'MAIN' },
          { identifier_type: 'shared', identifier_value: 'X' },
        ],
      },
      {
        name: 'Second',
        identifiers: [
          { identifier_type: 'pos', identifier_value: 'SECOND' },
          { identifier_type: 'shared', identifier_value: 'X' },
        ],
      },
    ]);
    expect(r.status, r.text).toBe(200);
    mainId = r.json.locations[0].location_id;
    secondId = r.json.locations[1].location_id;
    const o = await registerLocations(p, other, [
      { name: 'Elsewhere', identifiers: [{ identifier_type: 'pos', identifier_value: 'ELSEWHERE' }] },
    ]);
    otherShopLocation = o.json.locations[0].location_id;
    await newProducts(p, shop, ['B1', 'B2']);
    await newProducts(p, other, ['B1']);
  });

  it('resolves a location_id of the shop', async () => {
    const r = await snap(shop, { location_id: mainId });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toMatchObject({ ok: true, shop, location_id: mainId, lines_upserted: 1 });
    expect((await levelRows(p, shop)).map((l) => [l.location_id, l.barcode, l.on_hand_qty])).toContainEqual([mainId, 'B1', 3]);
  });

  it('resolves a location_id written in upper case (a UUID is case-insensitive)', async () => {
    const r = await snap(shop, { location_id: secondId.toUpperCase() }, [{ barcode: 'B2', on_hand_qty: 1 }]);
    expect(r.status, r.text).toBe(200);
    expect(r.json.location_id).toBe(secondId);
  });

  it('resolves {identifier_type, identifier_value} to the one location of the shop that has it', async () => {
    const r = await snap(shop, { location: { identifier_type: 'pos', identifier_value: 'SECOND' } }, [{ barcode: 'B1', on_hand_qty: 7 }]);
    expect(r.status, r.text).toBe(200);
    expect(r.json).toMatchObject({ ok: true, location_id: secondId, lines_upserted: 1 });
    const a = await available(p, {
      shop,
      source_system: 'ec',
      mode: 'absolute',
      location: { identifier_type: 'pos', identifier_value: 'MAIN' },
      lines: [{ barcode: 'B1', available_qty: 2 }],
    });
    expect(a.status, a.text).toBe(200);
    expect(a.json.location_id).toBe(mainId);
    const rows = await levelRows(p, shop);
    expect(rows.find((l) => l.location_id === secondId && l.barcode === 'B1')?.on_hand_qty).toBe(7);
    expect(rows.find((l) => l.location_id === mainId && l.barcode === 'B1')?.available_qty).toBe(2);
  });

  it('a location_id that is not a UUID at all is 422 location_unresolved too (never a 500)', async () => {
    for (const bad of ['store-1', 'not a uuid', '12345']) {
      const s = await snap(shop, { location_id: bad });
      expect(s.status, `${bad}: ${s.text}`).toBe(422);
      expect(s.json).toEqual({ ok: false, error_kind: 'location_unresolved', error: expect.any(String) });
      const a = await available(p, {
        shop,
        source_system: 'ec',
        mode: 'absolute',
        location_id: bad,
        lines: [{ barcode: 'B1', available_qty: 1 }],
      });
      expect(a.status, `${bad}: ${a.text}`).toBe(422);
      expect(a.json).toEqual({ ok: false, error_kind: 'location_unresolved', error: expect.any(String) });
    }
  });

  it('an identifier no location of the shop has is 422 location_unresolved', async () => {
    const s = await snap(shop, { location: { identifier_type: 'pos', identifier_value: 'NOPE' } });
    expect(s.status, s.text).toBe(422);
    expect(s.json).toEqual({ ok: false, error_kind: 'location_unresolved', error: expect.any(String) });
    // Same value under another identifier type is a different identifier.
    const t = await snap(shop, { location: { identifier_type: 'wms', identifier_value: 'MAIN' } });
    expect(t.json).toMatchObject({ ok: false, error_kind: 'location_unresolved' });
  });

  it('a location of another shop is unresolved, by location_id and by identifier', async () => {
    const byId = await snap(shop, { location_id: otherShopLocation });
    expect(byId.status, byId.text).toBe(422);
    expect(byId.json).toMatchObject({ ok: false, error_kind: 'location_unresolved' });
    const byIdent = await snap(shop, { location: { identifier_type: 'pos', identifier_value: 'ELSEWHERE' } });
    expect(byIdent.status, byIdent.text).toBe(422);
    expect(byIdent.json).toMatchObject({ ok: false, error_kind: 'location_unresolved' });
    // And the other shop itself still resolves it.
    const own = await snap(other, { location_id: otherShopLocation });
    expect(own.status, own.text).toBe(200);
    expect((await levelRows(p, shop)).some((l) => l.location_id === otherShopLocation)).toBe(false);
  });

  it('endpoint 3 reports an unresolvable location per line without refusing the request', async () => {
    const r = await levels(p, {
      shop,
      source_system: 'wms',
      mode: 'absolute',
      lines: [
        { barcode: 'B2', location_id: mainId, on_hand_qty: 4 },
        { barcode: 'B2', location_id: randomUUID(), on_hand_qty: 4 },
        { barcode: 'B2', location_id: 'store-1', on_hand_qty: 4 },
        { barcode: 'B2', location: { identifier_type: 'shared', identifier_value: 'X' }, on_hand_qty: 4 },
        { barcode: 'B2', location_id: otherShopLocation, on_hand_qty: 4 },
      ],
    });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toMatchObject({ ok: true, lines_processed: 5, lines_updated: 1, lines_unresolved: 4 });
    expect(r.json.unresolved.map((u: { reason: string }) => u.reason)).toEqual([
      'location_unresolved',
      'location_unresolved',
      'location_ambiguous',
      'location_unresolved',
    ]);
  });

  it('after one of the two locations is registered again without the shared identifier, it resolves to the other', async () => {
    const s2 = uniqueShop('unshare');
    const r = await registerLocations(p, s2, [
      { name: 'One', identifiers: [{ identifier_type: 'grp', identifier_value: 'Z' }] },
      { name: 'Two', identifiers: [{ identifier_type: 'grp', identifier_value: 'Z' }] },
    ]);
    const [one, two] = r.json.locations.map((l: { location_id: string }) => l.location_id);
    await newProducts(p, s2, ['B1']);
    expect((await snap(s2, { location: { identifier_type: 'grp', identifier_value: 'Z' } })).json).toMatchObject({
      error_kind: 'location_ambiguous',
    });
    expect((await registerLocations(p, s2, [{ location_id: one, name: 'One', identifiers: [] }])).status).toBe(200);
    const ok = await snap(s2, { location: { identifier_type: 'grp', identifier_value: 'Z' } });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.json.location_id).toBe(two);
  });
});
