import { apiKeys, type Listener, type Queryable } from '@ingest/db';

export type KeyRow = apiKeys.ApiKeyRow;

/**
 * Where keys are kept and how their changes are heard: PostgreSQL and its `api_keys` notifications
 * in the service (pgKeyRows), an in-memory table in the gateway's HTTP-tier tests
 * (@ingest/access/testing). The rules (expiry, revocation, scopes, the cache) are the same code
 * over either.
 */
export interface KeyRows {
  insert(k: Parameters<typeof apiKeys.insert>[1]): Promise<KeyRow>;
  list(shop: string | null): Promise<KeyRow[]>;
  findByHash(hash: Buffer): Promise<KeyRow | null>;
  revoke(keyId: string): Promise<KeyRow | null>;
  touch(used: ReadonlyMap<string, Date>): Promise<void>;
  /** Calls `fn` with a key's id on every change of it, and with null when changes may have been missed. */
  watch(fn: (keyId: string | null) => void): () => void;
  /** Whether changes are heard right now: while they are not, no cached key is trusted. */
  watching(): boolean;
}

/**
 * Keys in agent_runtime.api_keys; changes heard on the process's one LISTEN connection. Without
 * one (a command-line tool that mints or revokes), nothing is heard and nothing cached is trusted.
 */
export function pgKeyRows(pool: Queryable, listener: Listener | null): KeyRows {
  return {
    insert: (k) => apiKeys.insert(pool, k),
    list: (shop) => apiKeys.list(pool, shop),
    findByHash: (hash) => apiKeys.findByHash(pool, hash),
    revoke: (keyId) => apiKeys.revoke(pool, keyId),
    touch: (used) => apiKeys.touch(pool, used),
    watch: (fn) => {
      if (!listener) return () => {};
      const unsubscribe = listener.subscribe(apiKeys.CHANNEL, (keyId) => fn(keyId));
      // Notifications sent while the connection was down are lost: forget everything on (re)connect.
      const unhook = listener.onConnect(() => fn(null));
      return () => {
        unsubscribe();
        unhook();
      };
    },
    watching: () => listener?.connected() ?? false,
  };
}
