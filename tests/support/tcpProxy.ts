// A TCP proxy for fault tests: services connect to it instead of the real server, and a test cuts
// the line (a database "outage") without stopping the server that other work shares.
//
//   const proxy = await startTcpProxy({ target: { host: '127.0.0.1', port: 5432 } });
//   // DATABASE_URL=postgres://postgres@127.0.0.1:${proxy.port}/db
//   await proxy.cut('refuse');   // every proxied socket reset; new connections refused
//   await proxy.restore();       // accepted and forwarded again
//   await proxy.stop();
import { createConnection, createServer, type AddressInfo, type Server, type Socket } from 'node:net';

/**
 * How new connections fare while the line is cut:
 * - `refuse`: the listener is closed, a connect fails with ECONNREFUSED (a server restart);
 * - `reset`: accepted and reset at once (ECONNRESET);
 * - `blackhole`: accepted and never answered (a network partition: only timeouts notice).
 */
export type CutMode = 'refuse' | 'reset' | 'blackhole';

export interface TcpProxy {
  host: string;
  port: number;
  /** Resets every open proxied connection (both sides) and handles new ones per `mode` until restore(). */
  cut(mode?: CutMode): Promise<void>;
  /** Accepts and forwards again (the same port). */
  restore(): Promise<void>;
  stop(): Promise<void>;
  isCut(): boolean;
  stats(): { accepted: number; open: number; resetByCut: number };
}

export interface TcpProxyOptions {
  target: { host: string; port: number };
  /** Listen port on 127.0.0.1; 0 (default) = any free port, kept across cut/restore. */
  port?: number;
  host?: string;
}

const kill = (s: Socket): void => {
  // RST rather than FIN: what a client sees when the server's host or the network goes away.
  if (!s.destroyed) s.resetAndDestroy();
};

export async function startTcpProxy(opts: TcpProxyOptions): Promise<TcpProxy> {
  const host = opts.host ?? '127.0.0.1';
  const open = new Set<Socket>(); // both ends of every proxied connection, and black-holed ones
  let cutMode: CutMode | null = null;
  let accepted = 0;
  let resetByCut = 0;
  let server: Server | null = null;
  let port = opts.port ?? 0;

  const onConnection = (client: Socket): void => {
    accepted += 1;
    client.on('error', () => {});
    if (cutMode === 'reset') return kill(client);
    open.add(client);
    client.on('close', () => open.delete(client));
    if (cutMode === 'blackhole') return; // held open, never forwarded
    const upstream = createConnection({ host: opts.target.host, port: opts.target.port });
    open.add(upstream);
    upstream.on('close', () => {
      open.delete(upstream);
      kill(client);
    });
    upstream.on('error', () => kill(client));
    client.on('close', () => kill(upstream));
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    client.pipe(upstream);
    upstream.pipe(client);
  };

  const listen = (): Promise<void> =>
    new Promise((resolve, reject) => {
      const s = createServer({ noDelay: true }, onConnection);
      s.once('error', reject);
      s.listen({ host, port }, () => {
        s.removeListener('error', reject);
        port = (s.address() as AddressInfo).port;
        server = s;
        resolve();
      });
    });

  const closeListener = (): Promise<void> =>
    new Promise((resolve) => {
      const s = server;
      server = null;
      if (!s) return resolve();
      s.close(() => resolve());
    });

  const resetAll = (): void => {
    for (const s of open) {
      resetByCut += 1;
      kill(s);
    }
    open.clear();
  };

  await listen();
  return {
    host,
    get port() {
      return port;
    },
    cut: async (mode = 'refuse') => {
      cutMode = mode;
      if (mode === 'refuse') await Promise.race([closeListener(), new Promise((r) => setTimeout(r, 50))]);
      resetAll();
    },
    restore: async () => {
      const wasRefusing = cutMode === 'refuse';
      cutMode = null;
      // black-holed connections never reached the server: drop them so their owners reconnect
      resetAll();
      if (wasRefusing || !server) await listen();
    },
    stop: async () => {
      cutMode = 'reset';
      resetAll();
      await Promise.race([closeListener(), new Promise((r) => setTimeout(r, 200))]);
    },
    isCut: () => cutMode !== null,
    stats: () => ({ accepted, open: open.size, resetByCut }),
  };
}

/** The same database URL, reached through the proxy. */
export function throughProxy(databaseUrl: string, proxy: TcpProxy): string {
  const url = new URL(databaseUrl);
  url.hostname = proxy.host;
  url.port = String(proxy.port);
  return url.toString();
}
