import net from 'node:net';

export interface TcpProxy {
  port: number;
  /** An outage: every open connection is reset and new ones are refused until `restore`. */
  cut(): void;
  restore(): void;
  /** Resets the open connections only (a network blip): new ones go through. */
  resetConnections(): void;
  stop(): Promise<void>;
}

/**
 * A TCP proxy in front of a real server (PostgreSQL here), so a test can take the server away
 * from the services as a network fault or a server outage would, without stopping the server
 * everyone else uses.
 */
export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const open = new Set<net.Socket>();
  let down = false;
  const server = net.createServer((client) => {
    if (down) {
      client.resetAndDestroy();
      return;
    }
    const upstream = net.connect(target.port, target.host);
    open.add(client);
    open.add(upstream);
    const close = () => {
      open.delete(client);
      open.delete(upstream);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', close).on('close', close);
    upstream.on('error', close).on('close', close);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const resetAll = () => {
    for (const s of open) s.resetAndDestroy();
    open.clear();
  };
  return {
    port,
    cut: () => {
      down = true;
      resetAll();
    },
    restore: () => {
      down = false;
    },
    resetConnections: resetAll,
    stop: async () => {
      resetAll();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The same database URL, reached through the proxy. */
export function throughProxy(databaseUrl: string, proxy: TcpProxy): string {
  const url = new URL(databaseUrl);
  url.hostname = '127.0.0.1';
  url.port = String(proxy.port);
  return url.toString();
}
