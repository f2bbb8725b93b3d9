// One request to a gateway as the suite's clients send it: JSON, the ingest secret, a 30 s bound.
import { INGEST_SECRET } from './load.ts';

export async function post(
  port: number,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: any; text: string }> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-ingest-secret': INGEST_SECRET, ...headers },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  let json: any = null;
  try {
    json = JSON.parse(text);
  } catch {
    json = null;
  }
  return { status: res.status, body: json, text };
}

/** available_qty of each shop's level INV before a load (verify.ts adds the applied deltas to it). */
export const BASE_AVAILABLE = 1_000_000;
