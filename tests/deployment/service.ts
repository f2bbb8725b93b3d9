// A Service as kube-proxy makes one: a TCP port that sends each new connection to one of the ready
// endpoints, in turn. A connection stays with the pod it went to until one side closes it, so a pod
// taken out of the endpoints keeps its open keep-alive connections, as in a cluster; how the gateway
// ends those when it drains is part of what the rolling restart checks.
import { createConnection, createServer, type AddressInfo, type Socket } from 'node:net';

export interface Service {
  port: number;
  setEndpoints(name: string, endpoints: Array<{ pod: string; port: number }>): void;
  endpoints(): Array<{ pod: string; port: number }>;
  stats(): { accepted: number; refusedNoEndpoint: number };
  stop(): Promise<void>;
}

export async function startService(name: string): Promise<Service> {
  let endpoints: Array<{ pod: string; port: number }> = [];
  let next = 0;
  let accepted = 0;
  let refusedNoEndpoint = 0;
  const open = new Set<Socket>();
  const server = createServer((client) => {
    accepted += 1;
    client.on('error', () => {});
    if (endpoints.length === 0) {
      // No ready endpoint: the connection is refused (a reset), as kube-proxy's REJECT rule does.
      refusedNoEndpoint += 1;
      client.resetAndDestroy();
      return;
    }
    const target = endpoints[next++ % endpoints.length]!;
    const upstream = createConnection({ host: '127.0.0.1', port: target.port });
    for (const s of [client, upstream]) {
      open.add(s);
      s.on('close', () => open.delete(s));
    }
    upstream.on('error', () => client.resetAndDestroy());
    client.on('error', () => upstream.resetAndDestroy());
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    setEndpoints: (_why, e) => {
      endpoints = [...e];
    },
    endpoints: () => [...endpoints],
    stats: () => ({ accepted, refusedNoEndpoint }),
    stop: async () => {
      for (const s of open) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      void name;
    },
  };
}
