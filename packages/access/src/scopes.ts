/**
 * What a per-shop key may do (D28). Each scope covers a set of endpoints; the daily snapshot and the
 * keys endpoints are platform-only, and `admin` (the operator API, for the key's own shop) is a
 * scope only the platform credential can grant, as it grants every key.
 */
export const SCOPES = ['products:write', 'inventory:write', 'orders:write', 'registry:write', 'commands:read', 'admin'] as const;
export type Scope = (typeof SCOPES)[number];

export const isScope = (s: string): s is Scope => (SCOPES as readonly string[]).includes(s);
