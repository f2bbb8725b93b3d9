import type { KeyRow, KeyRows } from '../src/keyRows.ts';

/**
 * Keys in memory, for the gateway's HTTP-tier tests: the same rows and announcements as
 * PostgreSQL's table and trigger (migrations/1764400000000_api-keys.sql), so the key service's rules
 * run unchanged. The integration tests run them over the real table.
 */
export function memoryKeyRows(): KeyRows & { rows: Map<string, KeyRow & { key_hash: Buffer }> } {
  const rows = new Map<string, KeyRow & { key_hash: Buffer }>();
  const watchers = new Set<(keyId: string | null) => void>();
  const announce = (keyId: string): void => {
    for (const w of watchers) w(keyId);
  };
  const plain = ({ key_hash: _, ...r }: KeyRow & { key_hash: Buffer }): KeyRow => ({ ...r, scopes: [...r.scopes] });
  return {
    rows,
    insert: async (k) => {
      if (rows.has(k.key_id)) throw new Error(`duplicate key id ${k.key_id}`);
      const row = { ...k, scopes: [...k.scopes], created_at: new Date(), revoked_at: null, last_used_at: null };
      rows.set(k.key_id, row);
      return plain(row);
    },
    list: async (shop) =>
      [...rows.values()]
        .filter((r) => shop === null || r.shop === shop)
        .sort((a, b) => a.shop.localeCompare(b.shop) || a.created_at.getTime() - b.created_at.getTime())
        .map(plain),
    findByHash: async (hash) => {
      for (const r of rows.values()) if (r.key_hash.equals(hash)) return plain(r);
      return null;
    },
    revoke: async (keyId) => {
      const r = rows.get(keyId);
      if (!r) return null;
      r.revoked_at ??= new Date();
      announce(keyId);
      return plain(r);
    },
    touch: async (used) => {
      for (const [keyId, at] of used) {
        const r = rows.get(keyId);
        if (r && (!r.last_used_at || r.last_used_at < at)) r.last_used_at = at;
      }
    },
    watch: (fn) => {
      watchers.add(fn);
      return () => void watchers.delete(fn);
    },
    watching: () => true,
  };
}
