import { afterAll, describe, expect, it } from 'vitest';
import { SchemaRegistry } from '@ingest/contracts';
import { unchanged, type CommandVersions } from '@ingest/domain';
import { fixtureVersion2 } from '../testing/commandVersionFixture.ts';
import { createCommandDecoder } from './decodeCommand.ts';

// An older command reaches the deciders in the current shape (docs/replay.md#command-versions), shown
// with the fixture's made-up version 2 (its daily snapshot's snapshot_date is business_date), never a
// production one: the production registry has no version 2.
const fixture = fixtureVersion2();
afterAll(() => fixture.remove());
const schemas = new SchemaRegistry(fixture.dir);
const decoderWith = (versions: CommandVersions) => createCommandDecoder(schemas, versions);
const decode = decoderWith(fixture.versions);
const decodeV1 = createCommandDecoder(new SchemaRegistry());

const ID = '01900000-0000-7000-8000-000000000001';
const daily = (over: Record<string, unknown> = {}) => ({
  command_id: ID,
  kind: 'inventory.daily_snapshot',
  shop: 'shop.example',
  received_at: '2026-11-02T00:00:00.000Z',
  source: { endpoint: 'scheduler' },
  actor: 'platform',
  payload: { snapshot_date: '2026-11-01' },
  ...over,
});
const channels = {
  command_id: ID,
  kind: 'channels.register',
  shop: 'shop.example',
  received_at: '2026-11-02T00:00:00.000Z',
  source: { endpoint: '/api/admin/channels' },
  payload: { channels: [{ channel_id: '01900000-0000-7000-8000-0000000000c1', name: 'Online' }] },
};
const message = (value: unknown) => Buffer.from(JSON.stringify(value));
const v2Daily = { ...daily(), payload: { business_date: '2026-11-01' } };

describe('decoding an older command: upcast to the current version (fixture v2)', () => {
  it('a version 1 command, with v or without, comes out in the version 2 shape, without its version', () => {
    expect(decode(message(daily()))).toEqual({ ok: true, command: v2Daily });
    expect(decode(message(daily({ v: 1 })))).toEqual({ ok: true, command: v2Daily });
  });

  it('a version 2 command is read as it is', () => {
    expect(decode(message({ ...v2Daily, v: 2 }))).toEqual({ ok: true, command: v2Daily });
  });

  it('a kind that did not change comes out as version 1 decodes it', () => {
    expect(decode(message(channels))).toEqual(decodeV1(message(channels)));
    expect(decode(message(channels))).toMatchObject({ ok: true, command: { actor: 'platform' } });
  });

  it('each command is read with the schemas of its own version: a version 1 command in the version 2 shape is refused', () => {
    expect(decode(message({ ...v2Daily, v: 1 }))).toEqual({
      ok: false,
      error: 'invalid inventory.daily_snapshot payload: snapshot_date required',
      commandId: ID,
      shop: 'shop.example',
    });
    expect(decode(message(daily({ v: 2 })))).toMatchObject({
      ok: false,
      error: 'invalid inventory.daily_snapshot payload: business_date required',
    });
  });

  it('parks a command of a kind without upcaster, naming it (npm test refuses such a registry, commandVersions.unit.test.ts)', () => {
    const without = decoderWith({ ...fixture.versions, upcasters: { ...fixture.versions.upcasters, 'inventory.daily_snapshot': {} } });
    expect(without(message(daily()))).toEqual({
      ok: false,
      error: 'no upcaster of inventory.daily_snapshot from version 1 to 2',
      commandId: ID,
      shop: 'shop.example',
    });
  });

  it('parks a command an upcaster turned into something version 2 does not read, rather than hand it to a decider', () => {
    const broken = decoderWith({
      ...fixture.versions,
      upcasters: { ...fixture.versions.upcasters, 'inventory.daily_snapshot': { 1: unchanged } },
    });
    expect(broken(message(daily()))).toMatchObject({
      ok: false,
      error:
        'inventory.daily_snapshot upcast from version 1 does not fit version 2: invalid inventory.daily_snapshot payload: business_date required',
      commandId: ID,
    });
  });

  it('parks a version 3 command as newer than it reads', () => {
    expect(decode(message(daily({ v: 3 })))).toMatchObject({
      ok: false,
      error: 'command version 3 is newer than this projector reads (up to version 2)',
    });
  });
});
