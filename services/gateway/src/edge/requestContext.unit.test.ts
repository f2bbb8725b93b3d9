import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { SchemaRegistry } from '@ingest/contracts';
import type { Pool } from '@ingest/db';
import { KafkaPortError, createCommandLog, type CommandLog, type OutgoingMessage } from '@ingest/kafka';
import { createLogger, createRegistry, tracingOn } from '@ingest/runtime';
import { buildApp } from '../app.ts';
import { DEFAULT_GATEWAY_CONFIG } from '../config.ts';
import type { ReplyWaiter } from '../commands/replies.ts';
import { chooseRequestId } from './requestContext.ts';

// One request id in every line about a request, echoed to the caller and carried
// to the projector in the command's record headers. Tracing is off in this file (the default).
const servers: Array<{ close(): void }> = [];
afterEach(() => servers.splice(0).forEach((s) => s.close()));
const replies: ReplyWaiter = { register: () => ({ wait: async () => null, cancel: () => {} }), close: async () => {} };

async function start(commandLog: CommandLog): Promise<{ url: string; lines: Array<Record<string, unknown>> }> {
  const lines: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk: Buffer, _e, done) {
      for (const l of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  const app = buildApp({
    config: { ...DEFAULT_GATEWAY_CONFIG, ingestSecrets: ['s'], cronSecrets: ['c'], replyTimeoutMs: 10 },
    schemas: new SchemaRegistry(),
    commandLog,
    replies,
    dryRunner: { run: () => Promise.reject(new Error('no dry runs here')) },
    pool: { query: async () => ({ rows: [], rowCount: 0 }) } as unknown as Pool,
    log: createLogger({ name: 'gateway', destination }),
    registry: createRegistry(),
  });
  const server = app.listen(0, '127.0.0.1');
  servers.push(server);
  await new Promise((r) => server.once('listening', r));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, lines };
}

const post = (url: string, requestId?: string) =>
  fetch(`${url}/api/ingest/products`, {
    method: 'POST',
    headers: {
      'x-ingest-secret': 's',
      'content-type': 'application/json',
      ...(requestId === undefined ? {} : { 'x-request-id': requestId }),
    },
    body: JSON.stringify({ shop: 'a.example', products: [] }),
  });

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('request id', () => {
  it('a sane x-request-id is kept; a missing, empty, spaced, overlong or repeated one is replaced', () => {
    expect(chooseRequestId('abc-123_x.y:z')).toBe('abc-123_x.y:z');
    expect(chooseRequestId(undefined)).toMatch(UUID);
    expect(chooseRequestId('')).toMatch(UUID);
    expect(chooseRequestId('has space')).toMatch(UUID);
    expect(chooseRequestId('x'.repeat(129))).toMatch(UUID);
    expect(chooseRequestId('a\u0000b')).toMatch(UUID);
    expect(chooseRequestId(['a', 'b'])).toMatch(UUID);
  });

  it('is echoed in the response, also on a 404, and generated when the caller sent none', async () => {
    const { url } = await start({ appendCommand: async () => {} });
    expect((await post(url, 'mine-1')).headers.get('x-request-id')).toBe('mine-1');
    expect((await post(url)).headers.get('x-request-id')).toMatch(UUID);
    expect((await post(url, 'bad id')).headers.get('x-request-id')).toMatch(UUID);
    expect((await fetch(`${url}/nowhere`, { headers: { 'x-request-id': 'lost-1' } })).headers.get('x-request-id')).toBe('lost-1');
  });

  it('every log line about the request carries it (a dependency fault answered 503)', async () => {
    const { url, lines } = await start({
      appendCommand: async () => {
        throw new KafkaPortError({ code: 'kafka_unavailable', retriable: true, message: 'down' });
      },
    });
    const res = await post(url, 'req-503');
    expect(res.status).toBe(503);
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(line).toMatchObject({ request_id: 'req-503' });
  });

  it('travels to the projector in the record headers, beside command_id and kind; tracing off adds no traceparent', async () => {
    expect(tracingOn()).toBe(false);
    const sent: OutgoingMessage[] = [];
    const commandLog = createCommandLog({ send: async (m) => void sent.push(m), sendMany: async () => {}, close: async () => {} }, 'cmds');
    const { url } = await start(commandLog);
    expect((await post(url, 'req-kafka')).status).toBe(202);
    const command = JSON.parse(sent[0]?.value ?? '{}') as { command_id: string; kind: string };
    expect(sent[0]?.headers).toEqual({ command_id: command.command_id, kind: command.kind, request_id: 'req-kafka' });
  });
});
