import { describe, expect, it } from 'vitest';
import { SchemaRegistry } from '@ingest/contracts';
import { createCommandDecoder } from './decodeCommand.ts';

const decode = createCommandDecoder(new SchemaRegistry());

const envelope = (over: Record<string, unknown> = {}) => ({
  command_id: '01900000-0000-7000-8000-000000000001',
  kind: 'channels.register',
  shop: 'shop.example',
  received_at: '2026-11-02T00:00:00.000Z',
  source: { endpoint: '/api/admin/channels' },
  payload: { channels: [{ channel_id: '01900000-0000-7000-8000-0000000000c1', name: 'Online' }] },
  ...over,
});
const message = (value: unknown) => Buffer.from(JSON.stringify(value));

describe('decoding a command: its actor (D28)', () => {
  it('applies a command without actor, as the log before D28 holds them, as platform', () => {
    expect(decode(message(envelope()))).toMatchObject({ ok: true, command: { actor: 'platform' } });
  });

  it('keeps the actor the gateway wrote: a key id, or platform', () => {
    expect(decode(message(envelope({ actor: 'key_0123456789abcdef' })))).toMatchObject({
      ok: true,
      command: { actor: 'key_0123456789abcdef' },
    });
    expect(decode(message(envelope({ actor: 'platform' })))).toMatchObject({ ok: true, command: { actor: 'platform' } });
  });

  it('refuses an actor that is neither platform nor a key id (parked, with its ids)', () => {
    for (const actor of ['', 'key_0123', 'KEY_0123456789ABCDEF', 'admin', 42])
      expect(decode(message(envelope({ actor }))), String(actor)).toMatchObject({
        ok: false,
        error: expect.stringMatching(/^invalid command envelope/),
        commandId: '01900000-0000-7000-8000-000000000001',
      });
  });
});

describe('decoding a command: its schema version (docs/replay.md#command-versions)', () => {
  it('reads a command without v, as every log written before versions holds them, as version 1', () => {
    const without = decode(message(envelope()));
    expect(without).toMatchObject({ ok: true, command: { kind: 'channels.register' } });
    // The version belongs to the record: the deciders get the same command either way.
    expect(decode(message(envelope({ v: 1 })))).toEqual(without);
    expect(without.ok && 'v' in without.command).toBe(false);
  });

  it('parks a command of a newer version than this code reads, with its ids (applied by a retry after the upgrade)', () => {
    expect(decode(message(envelope({ v: 2 })))).toEqual({
      ok: false,
      error: 'command version 2 is newer than this projector reads (up to version 1)',
      commandId: '01900000-0000-7000-8000-000000000001',
      shop: 'shop.example',
    });
  });

  it('refuses a v that is not a positive integer', () => {
    for (const v of [0, -1, 1.5, '1', null, 2 ** 53])
      expect(decode(message(envelope({ v }))), String(v)).toMatchObject({
        ok: false,
        error: 'invalid command envelope: v must be a positive integer',
        commandId: '01900000-0000-7000-8000-000000000001',
      });
  });
});
