import { Agent, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { drainableServer, type DrainableServer } from './drain.ts';

let s: DrainableServer | null = null;
afterEach(async () => {
  s?.server.close();
  s = null;
});

/** One keep-alive socket for every request, as a client's connection pool reuses one. */
const oneSocket = () => new Agent({ keepAlive: true, maxSockets: 1 });

function get(port: number, agent: Agent): Promise<{ status: number; connection: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/', agent }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection }));
    });
    req.on('error', reject);
    req.end();
  });
}

async function start(): Promise<number> {
  s = drainableServer((_req, res) => res.end('ok'));
  await new Promise<void>((resolve) => s!.server.listen(0, '127.0.0.1', resolve));
  return (s.server.address() as AddressInfo).port;
}

describe('a stopping gateway (SHUTDOWN_LINGER)', () => {
  it("serves a request on a client's idle keep-alive connection during the linger, closing it after the answer", async () => {
    const port = await start();
    const agent = oneSocket();
    expect((await get(port, agent)).connection).toBe('keep-alive');
    const drained = s!.drain(400);
    // The client sends on the connection it already has, after the stop began: answered, not reset.
    const during = await get(port, agent);
    expect(during).toEqual({ status: 200, connection: 'close' });
    await drained;
    agent.destroy();
  });

  it('closes the connections still idle when the linger ends, and the listener', async () => {
    const port = await start();
    const agent = oneSocket();
    await get(port, agent);
    const t0 = Date.now();
    await s!.drain(300);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(290);
    await expect(get(port, new Agent())).rejects.toThrow(/ECONNREFUSED/);
    agent.destroy();
  });

  it('stops at once with a linger of 0, or when no connection is open', async () => {
    const port = await start();
    const t0 = Date.now();
    await s!.drain(5000);
    expect(Date.now() - t0).toBeLessThan(1000);
    const again = await start();
    const agent = oneSocket();
    await get(again, agent);
    const t1 = Date.now();
    await s!.drain(0);
    expect(Date.now() - t1).toBeLessThan(1000);
    agent.destroy();
    void port;
  });
});
