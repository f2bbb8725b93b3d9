// The soak's client: one request as a well-behaved client sends it (docs/api.md): on 429, 503 or 409
// (an Idempotency-Key still in flight) it waits Retry-After and sends the same request again, until
// it is answered otherwise or `giveUpMs` passed. Every attempt's reply time is recorded per endpoint.
import { readReply } from '../../tests/faults/client.ts';
import type { Sent } from '../../tests/faults/load.ts';

export interface Request {
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  body?: unknown;
}

export interface Reply {
  status: number | null;
  headers: Headers | null;
  body: any;
  text: string;
  error: string | null;
  attempts: number;
  /** First attempt sent, last answered (epoch ms). */
  sentAt: number;
  endAt: number;
}

/** What one attempt looked like, for the per-window statistics. */
export interface Attempt {
  endpoint: string;
  at: number;
  ms: number;
  status: number | null;
  retried: boolean;
}

const RETRY_STATUSES = new Set([409, 429, 503]);
const MAX_WAIT_MS = 10_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The endpoint a path is counted under: its path without the query and with ids as `{id}`. */
export const endpointOf = (method: string, path: string): string =>
  `${method} ${path.split('?')[0]!.replace(/\/[0-9a-f]{8}-[0-9a-f-]{27,}/i, '/{id}')}${path.includes('dry_run=true') ? ' (dry run)' : ''}`;

export function createClient(o: { onAttempt: (a: Attempt) => void; timeoutMs?: number; giveUpMs?: number }) {
  // a generous client: the gateway answers 202 after REPLY_TIMEOUT_MS (15 s); past 60 s it hung
  const timeoutMs = o.timeoutMs ?? 60_000;
  const giveUpMs = o.giveUpMs ?? 90_000;
  const once = async (port: number, r: Request): Promise<Omit<Reply, 'attempts' | 'sentAt' | 'endAt'>> => {
    try {
      const res = await fetch(`http://127.0.0.1:${port}${r.path}`, {
        method: r.method,
        headers: { ...r.headers, ...(r.body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(r.body === undefined ? {} : { body: JSON.stringify(r.body) }),
        signal: AbortSignal.timeout(timeoutMs),
      });
      const { body, text } = await readReply(res);
      return { status: res.status, headers: res.headers, body, text: text.slice(0, 2000), error: null };
    } catch (err) {
      const e = err as Error & { cause?: { code?: string } };
      return {
        status: null,
        headers: null,
        body: null,
        text: '',
        error: e.name === 'TimeoutError' ? `timeout after ${timeoutMs} ms` : (e.cause?.code ?? e.message),
      };
    }
  };
  return async (port: number, r: Request): Promise<Reply> => {
    const endpoint = endpointOf(r.method, r.path);
    const sentAt = Date.now();
    for (let attempts = 1; ; attempts++) {
      const t0 = Date.now();
      const reply = await once(port, r);
      const retry = reply.status !== null && RETRY_STATUSES.has(reply.status) && Date.now() - sentAt < giveUpMs;
      o.onAttempt({ endpoint, at: t0, ms: Date.now() - t0, status: reply.status, retried: retry });
      if (!retry) return { ...reply, attempts, sentAt, endAt: Date.now() };
      // Retry-After in seconds (the gateway's form); at least 100 ms, at most 10 s.
      const after = Number(reply.headers?.get('retry-after') ?? '1');
      await sleep(Math.min(MAX_WAIT_MS, Math.max(100, (Number.isFinite(after) ? after : 1) * 1000)));
    }
  };
}

export type Call = ReturnType<typeof createClient>;

/**
 * The reply fields tests/faults/verify.ts reads from a record. A soak keeps every record until its end
 * checks (260,000 in an hour): kept whole, the reply bodies and texts grew the client's own heap with
 * the run, and its collections with it, and a collection pausing the client is added to every reply
 * time it is measuring.
 */
const KEPT_FIELDS = ['status', 'command_id', 'created', 'lines_updated', 'lines_deduped'] as const;

const keptBody = (body: any): any => {
  if (body === null || typeof body !== 'object') return body;
  const kept: Record<string, unknown> = {};
  for (const k of KEPT_FIELDS) if (k in body) kept[k] = body[k];
  return kept;
};

/** The fault suite's record of a request (tests/faults/verify.ts checks it against the database), with what it reads of the reply. */
export function asSent(
  seq: number,
  kind: Sent['kind'],
  shop: string,
  gateway: string,
  path: string,
  reply: Reply,
  extra: Partial<Sent>,
): Sent {
  return {
    seq,
    kind,
    shop,
    gateway,
    path,
    sentAt: reply.sentAt,
    endAt: reply.endAt,
    status: reply.status,
    retryAfter: reply.headers?.get('retry-after') ?? null,
    body: keptBody(reply.body),
    text: reply.text.slice(0, 160), // what a failure message quotes
    error: reply.error,
    barcodes: [],
    key: null,
    delta: 0,
    commandId: typeof reply.body?.command_id === 'string' && reply.status === 202 ? reply.body.command_id : null,
    ...extra,
  };
}
