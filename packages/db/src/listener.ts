import pg from 'pg';
import { retry } from '@ingest/runtime';

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
  const closing = new AbortController();
  let client: pg.Client | null = null;
  let pingTimer: NodeJS.Timeout | null = null;
  let reconnecting = false;

  const dropped = new WeakSet<pg.Client>();
  const drop = (c: pg.Client, err: unknown): void => {
    if (dropped.has(c)) return; // 'error' and 'end' both come for one loss
    dropped.add(c);
    c.removeAllListeners('notification');
    void c.end().catch(() => {});
    if (client !== c) return; // one that never got to serve: its connect() fails and is retried
    client = null;
    if (pingTimer) clearInterval(pingTimer);
    pingTimer = null;
    if (closing.signal.aborted) return;
    opts.log?.warn({ err }, 'LISTEN connection lost; reconnecting');
    reconnect();
  };

  /** One connection with every channel LISTENed, or it throws. */
  const connectOnce = async (): Promise<pg.Client> => {
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
      return c;
    } catch (err) {
      drop(c, err);
      throw err;
    }
  };

  // It never gives up: every failure waits twice as long as the one before (from min to max,
  // with jitter), on the retry every process loop uses (packages/runtime retry.ts).
  const reconnect = (): void => {
    if (reconnecting || closing.signal.aborted) return;
    reconnecting = true;
    let failures = 0;
    const attempt = retry(connectOnce, {
      classify: () => 'connect',
      backoff: (n) => {
        const ms = Math.min(maxBackoff, minBackoff * 2 ** (n - 1));
        return ms / 2 + Math.random() * (ms / 2);
      },
      signal: closing.signal,
      // One line per 10 failed attempts: an outage is not a log flood.
      onRetry: ({ err, attempt: n, delayMs }) => {
        failures = n;
        if (n % 10 === 1) opts.log?.warn({ err, attempt: n, retryInMs: Math.round(delayMs ?? 0) }, 'LISTEN connection failed; retrying');
      },
    });
    attempt.then(
      (c) => {
        reconnecting = false;
        if (closing.signal.aborted) return void c.end().catch(() => {});
        client = c;
        if (failures > 0) opts.log?.info({ attempts: failures }, 'LISTEN connection restored');
        pingTimer = setInterval(() => {
          const timeout = new Promise((_, reject) => setTimeout(() => reject(new Error('ping timed out')), pingEvery).unref());
          Promise.race([c.query('SELECT 1'), timeout]).catch((err: unknown) => drop(c, err));
        }, pingEvery);
        pingTimer.unref();
        for (const hook of connectHooks) hook();
      },
      () => void (reconnecting = false), // closed while retrying
    );
  };
  reconnect();

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
      closing.abort(new Error('listener closed'));
      if (pingTimer) clearInterval(pingTimer);
      const c = client;
      client = null;
      await c?.end().catch(() => {});
    },
  };
}
