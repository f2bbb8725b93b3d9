import { describe, expect, it } from 'vitest';
import { decideRegisterChannels, decideRegisterLocations, type RegistryState } from './decideRegistry.ts';

// D14: a location may be known by several external identifiers (a POS store code, an EC
// warehouse code...), each of which resolves to it; and a registered id stays its shop's.

const SHOP = 'shop.example';
const L1 = '01900000-0000-7000-8000-0000000000a1';
const C1 = '01900000-0000-7000-8000-0000000000c1';
const meta = {
  command_id: '01900000-0000-7000-8000-000000000001',
  shop: SHOP,
  received_at: '2026-11-02T00:00:00.000Z',
  source: { endpoint: '/test' },
  actor: 'platform',
};

describe('decideRegisterLocations: several identifiers for one location (D14)', () => {
  it('keeps every distinct identifier, in the order sent, and drops only exact repeats', () => {
    const identifiers = [
      { identifier_type: 'pos_store_code', identifier_value: 'S-001' },
      { identifier_type: 'ec_warehouse', identifier_value: 'W-9' },
      { identifier_type: 'pos_store_code', identifier_value: 'S-002' },
      { identifier_type: 'pos_store_code', identifier_value: 'S-001' },
    ];
    const plan = decideRegisterLocations(new Map(), {
      ...meta,
      kind: 'locations.register',
      payload: { locations: [{ location_id: L1, name: 'Main', identifiers }] },
    });
    const distinct = identifiers.slice(0, 3);
    expect(plan.identifiers).toEqual(distinct.map((i) => ({ location_id: L1, shop: SHOP, ...i })));
    expect(plan.reply.body['locations']).toEqual([{ location_id: L1, name: 'Main', identifiers: distinct }]);
  });
});

describe('decideRegisterChannels: a channel_id of another shop (D14)', () => {
  it('is refused with 422 invalid_payload naming the id', () => {
    const state: RegistryState = new Map([[C1, { shop: 'owner.example', created_at: '2026-11-01T00:00:00.000Z' }]]);
    const plan = decideRegisterChannels(state, {
      ...meta,
      kind: 'channels.register',
      payload: { channels: [{ channel_id: C1, name: 'Mine' }] },
    });
    expect(plan.reply).toEqual({
      status: 422,
      body: { ok: false, error_kind: 'invalid_payload', error: `channel_id ${C1} belongs to another shop` },
    });
    expect(plan.rows).toEqual([]);
  });
});
