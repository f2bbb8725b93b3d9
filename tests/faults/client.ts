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
  return { status: res.status, ...(await readReply(res)) };
}

/** A reply's text and its JSON (null when it is not JSON). */
export async function readReply(res: Response): Promise<{ body: any; text: string }> {
  const text = await res.text();
  try {
    return { body: JSON.parse(text), text };
  } catch {
    return { body: null, text };
  }
}

/** available_qty of each shop's level INV before a load (verify.ts adds the applied deltas to it). */
export const BASE_AVAILABLE = 1_000_000;
