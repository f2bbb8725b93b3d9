import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { SchemaRegistry } from '@ingest/contracts';
import type { Pool } from '@ingest/db';
import { KafkaPortError, type CommandLog } from '@ingest/kafka';
import { createRegistry } from '@ingest/runtime';
import { silentLogger } from '@ingest/runtime/testing';
import { buildApp } from '../app.ts';
import { DEFAULT_GATEWAY_CONFIG } from '../config.ts';
import type { ReplyWaiter } from '../commands/replies.ts';

// D13 at the HTTP edge: how the gateway answers when the command log refuses or lags. The command
// log here is a stand-in that fails on purpose; the real path is covered by the integration tier.
const servers: Array<{ close(): void }> = [];
afterEach(() => servers.splice(0).forEach((s) => s.close()));

const replies: ReplyWaiter = {
  register: () => ({ wait: async () => null, cancel: () => {} }),
  close: async () => {},
};

async function start(commandLog: CommandLog, lag: number | null = null): Promise<string> {
  const app = buildApp({
    config: { ...DEFAULT_GATEWAY_CONFIG, ingestSecrets: ['s'], cronSecrets: ['c'], maxConsumerLag: 10 },
    schemas: new SchemaRegistry(),
    commandLog,
    replies,
    dryRunner: { run: () => Promise.reject(new Error('no dry runs here')) },
    pool: { query: async () => ({ rows: [], rowCount: 0 }) } as unknown as Pool,
    log: silentLogger(),
    registry: createRegistry(),
    backlog: { lag: () => lag },
  });
  const server = app.listen(0, '127.0.0.1');
  servers.push(server);
  await new Promise((r) => server.once('listening', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const send = (url: string) =>
  fetch(`${url}/api/ingest/products`, {
    method: 'POST',
    headers: { 'x-ingest-secret': 's', 'content-type': 'application/json' },
    body: JSON.stringify({ shop: 'a.example', products: [] }),
  });

describe('overload and outage answers (D13)', () => {
  it('Kafka unreachable -> 503 with Retry-After, and the body says so without internals', async () => {
    const url = await start({
      appendCommand: async () => {
        throw new KafkaPortError({ code: 'kafka_unavailable', retriable: true, message: 'Connection error: ECONNREFUSED 127.0.0.1:9092' });
      },
    });
    const res = await send(url);
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('5');
    const body = await res.json();
    expect(body).toEqual({ ok: false, error: 'command log unavailable; retry later' });
  });

  it('a projection backlog over the limit -> 429 with Retry-After, before anything is appended', async () => {
    let appended = 0;
    const url = await start({ appendCommand: async () => void appended++ }, 11);
    const res = await send(url);
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('5');
    expect(((await res.json()) as { ok: boolean }).ok).toBe(false);
    expect(appended).toBe(0);
  });

  it('a body nested deeper than JSON.stringify can carry -> 400, not a 500 or a 503', async () => {
    const url = await start({ appendCommand: async (c) => void JSON.stringify(c) });
    const raw = await fetch(`${url}/api/order-line-master/bulk-upsert`, {
      method: 'POST',
      headers: { 'x-ingest-secret': 's', 'content-type': 'application/json' },
      body: `{"shop":"a.example","rows":[${'['.repeat(20000)}${']'.repeat(20000)}]}`,
    });
    expect(raw.status).toBe(400);
    expect(await raw.json()).toEqual({ ok: false, error: 'invalid JSON body: nested too deeply' });
  });
});
