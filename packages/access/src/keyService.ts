import { KEY_SHAPE, keyHash, mintKey } from './apiKey.ts';
import type { KeyRow, KeyRows } from './keyRows.ts';
import { isScope, type Scope } from './scopes.ts';

/** Who a valid per-shop key is (D28): what the gateway authorises a request with. */
export interface KeyPrincipal {
  keyId: string;
  shop: string;
  scopes: ReadonlySet<Scope>;
}

export interface CreateKey {
  shop: string;
  scopes: readonly Scope[];
  expires_in_days?: number;
  note?: string;
}

/** The answer of a minted key: the only time the key itself is shown (D28). */
export interface CreatedKey {
  key_id: string;
  key: string;
  shop: string;
  scopes: string[];
  expires_at: string | null;
}

/** A key as it is listed: never the key or its hash. */
export interface ListedKey {
  key_id: string;
  shop: string;
  scopes: string[];
  note: string | null;
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
}

export interface KeyService {
  /**
   * The live key `key` is, from the cache alone: undefined when the cache does not know it (or is not
   * trusted now), null when it knows the key is not valid. Synchronous, for the edge's raw-body path.
   */
  cached(key: string): KeyPrincipal | null | undefined;
  /** The live key `key` is, or null for a malformed, unknown, expired or revoked one. Throws when the store is down. */
  authenticate(key: string): Promise<KeyPrincipal | null>;
  create(req: CreateKey): Promise<CreatedKey>;
  list(shop: string | null): Promise<ListedKey[]>;
  revoke(keyId: string): Promise<ListedKey | null>;
  /** Writes the last uses not written yet and stops listening. */
  close(): Promise<void>;
}

export interface KeyServiceOptions {
  rows: KeyRows;
  /** API_KEY_PEPPER: the HMAC key of the stored hashes (apiKey.ts). */
  pepper: string;
  now?: () => Date;
  /** How often last_used_at is written, for every key used since (default 5 s). */
  touchEveryMs?: number;
  /** A cached answer is asked again after this long even without a notification (default 5 min). */
  cacheTtlMs?: number;
  /** At most this many keys (valid or not) are cached; the oldest go first (default 10,000). */
  maxCached?: number;
  onError?: (err: unknown, what: string) => void;
}

interface Cached {
  /** null: no such key (or it is malformed). */
  row: KeyRow | null;
  at: number;
}

const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);

const listed = (r: KeyRow): ListedKey => ({
  key_id: r.key_id,
  shop: r.shop,
  scopes: r.scopes,
  note: r.note,
  created_at: r.created_at.toISOString(),
  expires_at: iso(r.expires_at),
  revoked_at: iso(r.revoked_at),
  last_used_at: iso(r.last_used_at),
});

/**
 * Per-shop keys (D28). A request's key is hashed (HMAC, µs) and looked up in a small cache first, so
 * a warm key costs no database round trip. Revocation reaches every gateway within a second: each
 * change of a key is announced on commit (a trigger) and drops it from every gateway's cache; when
 * the announcements may have been missed (the LISTEN connection was lost), the whole cache is
 * dropped, and while it is down no cached answer is trusted. Expiry is checked on every request.
 */
export function createKeyService(opts: KeyServiceOptions): KeyService {
  const now = opts.now ?? (() => new Date());
  const ttl = opts.cacheTtlMs ?? 300_000;
  const maxCached = opts.maxCached ?? 10_000;
  const cache = new Map<string, Cached>();
  const used = new Map<string, Date>();
  const onError = opts.onError ?? (() => {});

  // Bumped by every announcement: a lookup that raced one (its row may predate a revocation
  // announced while it was in flight) is used for its own request but not cached.
  let changes = 0;
  const unwatch = opts.rows.watch((keyId) => {
    changes++;
    if (keyId === null) return cache.clear();
    for (const [hash, c] of cache) if (c.row?.key_id === keyId) cache.delete(hash);
  });
  const flush = async (): Promise<void> => {
    if (used.size === 0) return;
    const batch = new Map(used);
    used.clear();
    await opts.rows.touch(batch).catch((err: unknown) => onError(err, 'could not record when keys were last used'));
  };
  const timer = setInterval(() => void flush(), opts.touchEveryMs ?? 5000);
  timer.unref();

  const principalOf = (row: KeyRow | null, at: Date): KeyPrincipal | null => {
    if (!row || row.revoked_at || (row.expires_at && row.expires_at.getTime() <= at.getTime())) return null;
    return { keyId: row.key_id, shop: row.shop, scopes: new Set(row.scopes.filter(isScope)) };
  };
  const hashOf = (key: string): string | null => (KEY_SHAPE.test(key) ? keyHash(opts.pepper, key).toString('base64') : null);
  const fromCache = (hash: string, at: Date): KeyPrincipal | null | undefined => {
    const c = cache.get(hash);
    if (!c || !opts.rows.watching() || at.getTime() - c.at > ttl) return undefined;
    // Expiry needs no announcement: it is checked against the cached row each time.
    return c.row === null ? null : principalOf(c.row, at);
  };
  const use = (p: KeyPrincipal | null, at: Date): KeyPrincipal | null => {
    if (p) used.set(p.keyId, at);
    return p;
  };

  return {
    cached(key) {
      const hash = hashOf(key);
      if (hash === null) return null;
      const at = now();
      const p = fromCache(hash, at);
      return p === undefined ? undefined : use(p, at);
    },
    async authenticate(key) {
      const hash = hashOf(key);
      if (hash === null) return null;
      const at = now();
      const hit = fromCache(hash, at);
      if (hit !== undefined) return use(hit, at);
      const seen = changes;
      const row = await opts.rows.findByHash(Buffer.from(hash, 'base64'));
      if (seen === changes) {
        if (cache.size >= maxCached) cache.delete(cache.keys().next().value!);
        cache.set(hash, { row, at: at.getTime() });
      }
      return use(principalOf(row, at), at);
    },
    async create(req) {
      const { keyId, key } = mintKey();
      const at = now();
      const expiresAt = req.expires_in_days === undefined ? null : new Date(at.getTime() + req.expires_in_days * 86_400_000);
      const row = await opts.rows.insert({
        key_id: keyId,
        shop: req.shop,
        scopes: [...new Set(req.scopes)],
        note: req.note ?? null,
        key_hash: keyHash(opts.pepper, key),
        expires_at: expiresAt,
      });
      return { key_id: row.key_id, key, shop: row.shop, scopes: row.scopes, expires_at: iso(row.expires_at) };
    },
    list: async (shop) => (await opts.rows.list(shop)).map(listed),
    async revoke(keyId) {
      const row = await opts.rows.revoke(keyId);
      return row ? listed(row) : null;
    },
    async close() {
      clearInterval(timer);
      unwatch();
      await flush();
    },
  };
}
