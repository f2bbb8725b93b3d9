import { afterEach, describe, expect, it } from 'vitest';
import { memoryKeyRows } from '../testing/memoryKeyRows.ts';
import { KEY_SHAPE, keyHash, mintKey } from './apiKey.ts';
import { createKeyService, type KeyService } from './keyService.ts';
import type { KeyRows } from './keyRows.ts';

const PEPPER = 'unit-pepper-0123456789abcdef0123456789';
const services: KeyService[] = [];
afterEach(async () => {
  for (const s of services.splice(0)) await s.close();
});

/** The in-memory rows, counting the lookups that reach them (what a cache hit saves). */
function counted(rows = memoryKeyRows()) {
  let lookups = 0;
  const r: KeyRows & typeof rows = { ...rows, findByHash: (h) => (lookups++, rows.findByHash(h)) };
  return { rows: r, lookups: () => lookups };
}
const service = (rows: KeyRows, now?: () => Date): KeyService => {
  const s = createKeyService({ rows, pepper: PEPPER, ...(now ? { now } : {}) });
  services.push(s);
  return s;
};

describe('per-shop keys (D28)', () => {
  it('mints 256-bit keys of a fixed shape, stored only as their HMAC under the pepper', async () => {
    const a = mintKey();
    const b = mintKey();
    expect(a.key).toMatch(KEY_SHAPE);
    expect(a.keyId).toMatch(/^key_[0-9a-f]{16}$/);
    expect(a.key).not.toBe(b.key);
    expect(keyHash(PEPPER, a.key)).toHaveLength(32);
    expect(keyHash(PEPPER, a.key).equals(keyHash(`${PEPPER}x`, a.key))).toBe(false);

    const mem = memoryKeyRows();
    const created = await service(mem).create({ shop: 's', scopes: ['orders:write', 'orders:write'] });
    const stored = mem.rows.get(created.key_id)!;
    expect(stored.key_hash.equals(keyHash(PEPPER, created.key))).toBe(true);
    expect(JSON.stringify({ ...stored, key_hash: stored.key_hash.toString('hex') })).not.toContain(created.key);
    expect(created.scopes).toEqual(['orders:write']);
  });

  it('answers a warm key from the cache, without a lookup', async () => {
    const { rows, lookups } = counted();
    const keys = service(rows);
    const { key } = await keys.create({ shop: 's', scopes: ['commands:read'] });
    expect(keys.cached(key)).toBeUndefined();
    expect((await keys.authenticate(key))?.shop).toBe('s');
    expect(lookups()).toBe(1);
    for (let i = 0; i < 5; i++) expect((await keys.authenticate(key))?.scopes.has('commands:read')).toBe(true);
    expect(keys.cached(key)?.shop).toBe('s');
    expect(lookups()).toBe(1);
  });

  it('refuses malformed keys without a lookup, and unknown ones after one', async () => {
    const { rows, lookups } = counted();
    const keys = service(rows);
    expect(await keys.authenticate('not a key')).toBeNull();
    expect(lookups()).toBe(0);
    expect(await keys.authenticate(mintKey().key)).toBeNull();
    expect(lookups()).toBe(1);
  });

  it('drops a revoked key from the cache at once, and an expired one needs no announcement', async () => {
    let now = new Date('2026-11-26T00:00:00Z');
    const mem = memoryKeyRows();
    const keys = service(mem, () => now);
    const revoked = await keys.create({ shop: 's', scopes: ['admin'] });
    const expiring = await keys.create({ shop: 's', scopes: ['admin'], expires_in_days: 1 });
    expect(await keys.authenticate(revoked.key)).not.toBeNull();
    await keys.revoke(revoked.key_id);
    expect(keys.cached(revoked.key)).toBeUndefined();
    expect(await keys.authenticate(revoked.key)).toBeNull();
    now = new Date('2026-11-26T23:59:00Z');
    expect(await keys.authenticate(expiring.key)).not.toBeNull();
    now = new Date('2026-11-27T00:00:00Z');
    expect(keys.cached(expiring.key)).toBeNull();
  });

  it('does not cache a lookup that raced an announcement: its row may predate the revocation', async () => {
    const mem = memoryKeyRows();
    let announce: (id: string | null) => void = () => {};
    let release: () => void = () => {};
    const slow: KeyRows = {
      ...mem,
      watch: (fn) => ((announce = fn), () => {}),
      findByHash: async (h) => {
        const row = await mem.findByHash(h);
        await new Promise<void>((r) => (release = r));
        return row;
      },
    };
    const keys = service(slow);
    const { key, key_id } = await keys.create({ shop: 's', scopes: ['admin'] });
    const pending = keys.authenticate(key);
    await new Promise((r) => setImmediate(r));
    announce(key_id);
    release();
    expect(await pending).not.toBeNull();
    expect(keys.cached(key)).toBeUndefined();
  });

  it('trusts no cached key while changes are not heard, and forgets them all when they may have been missed', async () => {
    const mem = memoryKeyRows();
    let hearing = true;
    let announce: (id: string | null) => void = () => {};
    const keys = service({ ...mem, watching: () => hearing, watch: (fn) => ((announce = fn), () => {}) });
    const { key } = await keys.create({ shop: 's', scopes: ['admin'] });
    await keys.authenticate(key);
    expect(keys.cached(key)).not.toBeUndefined();
    hearing = false;
    expect(keys.cached(key)).toBeUndefined();
    hearing = true;
    announce(null);
    expect(keys.cached(key)).toBeUndefined();
  });

  it('writes when keys were last used in one batch, on close at the latest', async () => {
    const mem = memoryKeyRows();
    const keys = createKeyService({ rows: mem, pepper: PEPPER, touchEveryMs: 60_000 });
    const a = await keys.create({ shop: 's', scopes: ['admin'] });
    await keys.authenticate(a.key);
    expect(mem.rows.get(a.key_id)!.last_used_at).toBeNull();
    await keys.close();
    expect(mem.rows.get(a.key_id)!.last_used_at).toBeInstanceOf(Date);
  });
});
