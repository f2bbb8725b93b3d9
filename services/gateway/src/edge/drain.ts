import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';

export interface DrainableServer {
  server: Server;
  /**
   * Stops the server without cutting a request: from now on every answer closes its connection
   * (`Connection: close`); connections that are open and idle stay open for `lingerMs` (a request
   * that arrives on one is served and ends it); then the listener closes with the connections still
   * idle, and this resolves once the requests in flight have been answered.
   */
  drain(lingerMs: number): Promise<void>;
}

/**
 * Why the linger (SHUTDOWN_LINGER): behind a Service (kube-proxy), a pod that has left the endpoints
 * still receives requests on the keep-alive connections its clients opened before. A client sends on
 * an idle connection whenever it likes, so closing one at once resets whatever request is on its way
 * (ECONNRESET, no answer). Ending each connection after an answer that says so cannot race.
 */
export function drainableServer(handler: (req: IncomingMessage, res: ServerResponse) => void): DrainableServer {
  let draining = false;
  const server = createServer((req, res) => {
    if (draining) res.shouldKeepAlive = false;
    handler(req, res);
  });
  return {
    server,
    drain: async (lingerMs) => {
      draining = true;
      if (lingerMs > 0 && (await openConnections(server)) > 0) await sleep(lingerMs);
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
    },
  };
}

const openConnections = (server: Server): Promise<number> =>
  new Promise((resolve) => server.getConnections((err, n) => resolve(err ? 0 : n)));
