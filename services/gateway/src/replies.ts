import pg from 'pg';
import type { Pool } from '@ingest/db';
import type { Logger } from '@ingest/runtime';

export interface StoredReply {
  status: number;
  body: Record<string, unknown>;
  shop: string;
}

export interface ReplyWaiter {
  /** Register before appending the command, so no result can slip past. */
  register(commandId: string): { wait(timeoutMs: number): Promise<StoredReply | null>; cancel(): void };
  close(): Promise<void>;
}

export async function fetchReplies(pool: Pool, ids: string[]): Promise<Map<string, StoredReply>> {
  if (ids.length === 0) return new Map();
  const { rows } = await pool.query<{ command_id: string; status_code: number; body: Record<string, unknown>; shop: string }>(
    'SELECT command_id, status_code, body, shop FROM agent_runtime.command_results WHERE command_id = ANY($1::uuid[])',
    [ids],
  );
  return new Map(rows.map((r) => [r.command_id, { status: r.status_code, body: r.body, shop: r.shop }]));
}

/**
 * Waits for projector results (D6). Every gateway instance LISTENs on `command_results`; the
 * projector NOTIFYs on commit and each instance wakes only its own waiters. A sweep re-reads
 * pending ids so a notification lost across a reconnect still resolves.
 */
export async function createReplyWaiter(opts: {
  pool: Pool;
  connectionString: string;
  role?: string;
  log: Logger;
  sweepMs?: number;
}): Promise<ReplyWaiter> {
  const { pool, log } = opts;
  const waiting = new Map<string, (r: StoredReply) => void>();
  let client: pg.Client | null = null;
  let closed = false;

  const resolveIds = async (ids: string[]): Promise<void> => {
    const found = await fetchReplies(pool, ids);
    for (const [id, reply] of found) {
      waiting.get(id)?.(reply);
      waiting.delete(id);
    }
  };

  const connect = async (): Promise<void> => {
    const c = new pg.Client({
      connectionString: opts.connectionString,
      application_name: 'ingest-gateway-replies',
      ...(opts.role ? { options: `-c role=${opts.role}` } : {}),
    });
    c.on('notification', (n) => {
      if (n.payload && waiting.has(n.payload)) void resolveIds([n.payload]).catch((err) => log.warn({ err }, 'reply fetch failed'));
    });
    c.on('error', (err) => {
      log.warn({ err }, 'reply listener lost its connection; reconnecting');
      client = null;
      void c.end().catch(() => {});
      if (!closed) setTimeout(() => void connect().catch(() => {}), 500);
    });
    await c.connect();
    await c.query('LISTEN command_results');
    client = c;
    if (waiting.size) await resolveIds([...waiting.keys()]);
  };
  await connect();

  const sweep = setInterval(() => {
    if (waiting.size) void resolveIds([...waiting.keys()]).catch(() => {});
  }, opts.sweepMs ?? 2000);
  sweep.unref();

  return {
    register(commandId) {
      let resolveFn: (r: StoredReply | null) => void = () => {};
      const result = new Promise<StoredReply | null>((resolve) => (resolveFn = resolve));
      waiting.set(commandId, (r) => resolveFn(r));
      return {
        wait: async (timeoutMs) => {
          const timer = setTimeout(() => resolveFn(null), timeoutMs);
          const r = await result;
          clearTimeout(timer);
          waiting.delete(commandId);
          return r;
        },
        cancel: () => {
          waiting.delete(commandId);
          resolveFn(null);
        },
      };
    },
    close: async () => {
      closed = true;
      clearInterval(sweep);
      for (const resolve of waiting.values()) resolve({ status: 503, body: { ok: false, error: 'shutting down' }, shop: '' });
      waiting.clear();
      await client?.end().catch(() => {});
    },
  };
}
