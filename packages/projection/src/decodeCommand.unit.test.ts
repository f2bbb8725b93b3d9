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
