import pg from 'pg';

export interface ListenerLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface Listener {
  /** Calls `fn` with each notification's payload on `channel`; returns an unsubscribe function. */
  subscribe(channel: string, fn: (payload: string) => void): () => void;
  /**
   * Calls `fn` after every connect (the first included): notifications sent while the connection
   * was down are lost, so a subscriber sweeps for what it may have missed.
   */
  onConnect(fn: () => void): () => void;
  connected(): boolean;
  close(): Promise<void>;
}

export interface ListenerOptions {
  connectionString: string;
  role?: string;
  applicationName?: string;
  log?: ListenerLog;
  /** Reconnect backoff: doubles from min to max (with jitter). */
  minBackoffMs?: number;
  maxBackoffMs?: number;
  /** A ping on the connection finds a silently dead socket (a cut network sends no RST). */
  pingEveryMs?: number;
}

const quoteIdent = (s: string) => `"${s.replaceAll('"', '""')}"`;

/**
 * One LISTEN connection per process, shared by every subscriber (reply waiters, the outbox relay).
 * It never gives up: a lost connection is replaced with backoff, every channel is LISTENed again,
 * and subscribers are told to sweep. It starts in the background, so a process can start (and
 * answer 503) while the database is down.
 */
export function createListener(opts: ListenerOptions): Listener {
  const minBackoff = opts.minBackoffMs ?? 100;
  const maxBackoff = opts.maxBackoffMs ?? 5000;
  const pingEvery = opts.pingEveryMs ?? 5000;
  const channels = new Map<string, Set<(payload: string) => void>>();
  const connectHooks = new Set<() => void>();
  let client: pg.Client | null = null;
  let closed = false;
  let backoff = minBackoff;
  let retryTimer: NodeJS.Timeout | null = null;
  let pingTimer: NodeJS.Timeout | null = null;
  let failures = 0;

  const dropped = new WeakSet<pg.Client>();
  const drop = (c: pg.Client, err: unknown): void => {
    if (dropped.has(c)) return; // 'error' and 'end' both come for one loss
    dropped.add(c);
    const wasConnected = client === c;
    if (wasConnected) {
      client = null;
      if (pingTimer) clearInterval(pingTimer);
      pingTimer = null;
    }
    c.removeAllListeners('notification');
    void c.end().catch(() => {});
    if (closed) return;
    failures += 1;
    // One line when the connection is lost, then one every 10 failed attempts: an outage is not a log flood.
    if (wasConnected || failures % 10 === 1)
      opts.log?.warn({ err, attempt: failures, retryInMs: backoff }, 'LISTEN connection lost; reconnecting');
    schedule();
  };

  const schedule = (): void => {
    if (closed || retryTimer) return;
    const delay = backoff / 2 + Math.random() * (backoff / 2);
    backoff = Math.min(maxBackoff, backoff * 2);
    retryTimer = setTimeout(() => {
      retryTimer = null;
      void connect();
    }, delay);
    retryTimer.unref();
  };

  const connect = async (): Promise<void> => {
    if (closed) return;
    const c = new pg.Client({
      connectionString: opts.connectionString,
      application_name: opts.applicationName ?? 'ingest-listener',
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
      connectionTimeoutMillis: 5000,
      ...(opts.role ? { options: `-c role=${opts.role}` } : {}),
    });
    c.on('error', (err) => drop(c, err));
    c.on('end', () => drop(c, new Error('connection ended')));
    c.on('notification', (n) => {
      const subs = channels.get(n.channel);
      if (subs) for (const fn of subs) fn(n.payload ?? '');
    });
    try {
      await c.connect();
      for (const channel of channels.keys()) await c.query(`LISTEN ${quoteIdent(channel)}`);
    } catch (err) {
      drop(c, err);
      return;
    }
    if (closed) {
      void c.end().catch(() => {});
      return;
    }
    client = c;
    if (failures > 0) opts.log?.info({ attempts: failures }, 'LISTEN connection restored');
    failures = 0;
    backoff = minBackoff;
    pingTimer = setInterval(() => {
      const timeout = new Promise((_, reject) => setTimeout(() => reject(new Error('ping timed out')), pingEvery).unref());
      Promise.race([c.query('SELECT 1'), timeout]).catch((err: unknown) => drop(c, err));
    }, pingEvery);
    pingTimer.unref();
    for (const hook of connectHooks) hook();
  };
  void connect();

  return {
    subscribe(channel, fn) {
      let subs = channels.get(channel);
      if (!subs) {
        subs = new Set();
        channels.set(channel, subs);
        const c = client;
        if (c) c.query(`LISTEN ${quoteIdent(channel)}`).catch((err: unknown) => drop(c, err));
      }
      subs.add(fn);
      return () => void channels.get(channel)?.delete(fn);
    },
    onConnect(fn) {
      connectHooks.add(fn);
      if (client) fn();
      return () => void connectHooks.delete(fn);
    },
    connected: () => client !== null,
    close: async () => {
      closed = true;
      if (retryTimer) clearTimeout(retryTimer);
      if (pingTimer) clearInterval(pingTimer);
      const c = client;
      client = null;
      await c?.end().catch(() => {});
    },
  };
}
