// Per-shop keys (D28) in the deployed topology: a key minted through one gateway pod writes through
// each of them, and its revocation through another pod is refused by every pod within a second
// (each pod's LISTEN connection over TLS hears the trigger's notification).
import { INGEST_SECRET } from '../faults/load.ts';

export interface KeysCheck {
  keyId: string;
  /** Per gateway pod: ms from the revocation's answer to the first 401 seen from that pod (polled every 20 ms). */
  revokedAfterMs: number[];
  failures: string[];
}

const call = async (port: number, method: string, path: string, headers: Record<string, string>, body?: unknown) => {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, text, json: (text.startsWith('{') ? JSON.parse(text) : undefined) as Record<string, unknown> | undefined };
};

export async function checkKeysAcrossGateways(ports: number[], shop: string): Promise<KeysCheck> {
  const failures: string[] = [];
  const platform = { 'x-ingest-secret': INGEST_SECRET };
  const minted = await call(ports[0]!, 'POST', '/api/admin/keys', platform, { shop, scopes: ['products:write', 'commands:read'] });
  if (minted.status !== 201) return { keyId: '', revokedAfterMs: [], failures: [`mint: ${minted.status} ${minted.text}`] };
  const keyId = String(minted.json?.['key_id']);
  const bearer = { authorization: `Bearer ${String(minted.json?.['key'])}` };
  for (const [i, port] of ports.entries()) {
    const own = await call(port, 'POST', '/api/ingest/products', bearer, { shop, products: [{ barcode: `K${i}`, product_name: 'keyed' }] });
    if (own.status !== 200) failures.push(`gateway ${i}: own shop with the key: ${own.status} ${own.text}`);
    const other = await call(port, 'POST', '/api/ingest/products', bearer, { shop: `other-${shop}`, products: [] });
    if (other.status !== 403) failures.push(`gateway ${i}: another shop with the key: ${other.status}, expected 403`);
  }
  const revoked = await call(ports[ports.length - 1]!, 'DELETE', `/api/admin/keys/${keyId}`, platform);
  if (revoked.status !== 200) failures.push(`revoke: ${revoked.status} ${revoked.text}`);
  const at = performance.now();
  const revokedAfterMs = await Promise.all(
    ports.map(async (port) => {
      for (;;) {
        const r = await call(port, 'GET', `/api/commands/${crypto.randomUUID()}`, bearer);
        if (r.status === 401) return performance.now() - at;
        if (performance.now() - at > 5000) return Infinity;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }),
  );
  for (const [i, ms] of revokedAfterMs.entries())
    if (!(ms < 1000)) failures.push(`gateway ${i} still accepted the revoked key after ${ms} ms`);
  return { keyId, revokedAfterMs, failures };
}
