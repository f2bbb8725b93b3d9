import { describe, expect, it } from 'vitest';
import {
  decideRegisterChannels,
  decideRegisterLocations,
  type RegisterChannelsCommand,
  type RegisterLocationsCommand,
  type RegistryState,
} from './decideRegistry.ts';

// D14: the locations and channels registry, decided without I/O. The gateway chooses a missing id
// (services/gateway/src/routes/inventoryEdge.unit.test.ts); what the rows look like in PostgreSQL, and the
// identifiers replaced there, stays in tests/integration/inventory-locations.int.test.ts.
const SHOP = 'shop.example';
const T0 = '2026-11-01T00:00:00.000Z';
const T1 = '2026-11-02T00:00:00.000Z';
const L1 = '01900000-0000-7000-8000-0000000000a1';
const L2 = '01900000-0000-7000-8000-0000000000a2';
const meta = {
  command_id: '01900000-0000-7000-8000-000000000001',
  shop: SHOP,
  received_at: T1,
  source: { endpoint: '/test' },
  actor: 'platform',
};

const locations = (ls: RegisterLocationsCommand['payload']['locations']): RegisterLocationsCommand => ({
  ...meta,
  kind: 'locations.register',
  payload: { locations: ls },
});
const channels = (cs: RegisterChannelsCommand['payload']['channels']): RegisterChannelsCommand => ({
  ...meta,
  kind: 'channels.register',
  payload: { channels: cs },
});
const stored = (...rows: Array<[string, string]>): RegistryState => new Map(rows.map(([id, shop]) => [id, { shop, created_at: T0 }]));

describe('decideRegisterLocations (D14)', () => {
  it('given new ids, then rows and identifiers are written and the answer is {ok, shop, locations:[{location_id, name, identifiers}]}', () => {
    const plan = decideRegisterLocations(
      stored(),
      locations([
        { location_id: L1, name: 'Main store', identifiers: [{ identifier_type: 'pos_store_code', identifier_value: 'S-001' }] },
        { location_id: L2, name: 'No identifiers', identifiers: [] },
      ]),
    );
    expect(plan.reply).toEqual({
      status: 200,
      body: {
        ok: true,
        shop: SHOP,
        locations: [
          { location_id: L1, name: 'Main store', identifiers: [{ identifier_type: 'pos_store_code', identifier_value: 'S-001' }] },
          { location_id: L2, name: 'No identifiers', identifiers: [] },
        ],
      },
    });
    expect(plan.rows).toEqual([
      { id: L1, shop: SHOP, name: 'Main store', created_at: T1, updated_at: T1 },
      { id: L2, shop: SHOP, name: 'No identifiers', created_at: T1, updated_at: T1 },
    ]);
    expect(plan.identifiers).toEqual([{ location_id: L1, shop: SHOP, identifier_type: 'pos_store_code', identifier_value: 'S-001' }]);
  });

  it('given a registered id, when registered again, then it is renamed (created_at kept) and its identifier set is the new one', () => {
    const plan = decideRegisterLocations(
      stored([L1, SHOP]),
      locations([{ location_id: L1, name: 'New', identifiers: [{ identifier_type: 't', identifier_value: 'new' }] }]),
    );
    expect(plan.rows).toEqual([{ id: L1, shop: SHOP, name: 'New', created_at: T0, updated_at: T1 }]);
    expect(plan.identifiers).toEqual([{ location_id: L1, shop: SHOP, identifier_type: 't', identifier_value: 'new' }]);
  });

  it('given an identifier sent twice for one location, then it is written once', () => {
    const twice = { identifier_type: 'pos', identifier_value: 'S1' };
    const plan = decideRegisterLocations(stored(), locations([{ location_id: L1, name: 'Store', identifiers: [twice, twice] }]));
    expect(plan.identifiers).toEqual([{ location_id: L1, shop: SHOP, ...twice }]);
  });

  it('given a location_id of another shop, then 422 invalid_payload and nothing is written', () => {
    const plan = decideRegisterLocations(stored([L1, 'owner.example']), locations([{ location_id: L1, name: 'Stolen', identifiers: [] }]));
    expect(plan).toEqual({
      rows: [],
      identifiers: [],
      reply: { status: 422, body: { ok: false, error_kind: 'invalid_payload', error: `location_id ${L1} belongs to another shop` } },
    });
  });
});

describe('decideRegisterChannels (D14)', () => {
  it('given channels, then rows are written and the answer is {ok, shop, channels:[{channel_id, name}]}', () => {
    const plan = decideRegisterChannels(
      stored(),
      channels([
        { channel_id: L1, name: 'Online' },
        { channel_id: L2, name: 'Marketplace' },
      ]),
    );
    expect(plan.reply).toEqual({
      status: 200,
      body: {
        ok: true,
        shop: SHOP,
        channels: [
          { channel_id: L1, name: 'Online' },
          { channel_id: L2, name: 'Marketplace' },
        ],
      },
    });
    expect(plan.rows.map((r) => [r.id, r.name])).toEqual([
      [L1, 'Online'],
      [L2, 'Marketplace'],
    ]);
  });

  it('given a channel_id of another shop, then 422 invalid_payload and nothing is written', () => {
    const plan = decideRegisterChannels(stored([L2, 'owner.example']), channels([{ channel_id: L2, name: 'Mine' }]));
    expect(plan.rows).toEqual([]);
    expect(plan.reply).toMatchObject({ status: 422, body: { ok: false, error_kind: 'invalid_payload' } });
  });
});
