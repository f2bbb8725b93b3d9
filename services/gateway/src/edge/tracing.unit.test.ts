import { Writable } from 'node:stream';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SchemaRegistry } from '@ingest/contracts';
import type { Pool } from '@ingest/db';
import { createCommandLog, withIncomingCommand, type MessageSink, type OutgoingMessage } from '@ingest/kafka';
import { SpanKind, createLogger, createRegistry } from '@ingest/runtime';
import { startTracingInMemory } from '@ingest/runtime/testing';
import { buildApp } from '../app.ts';
import { DEFAULT_GATEWAY_CONFIG } from '../config.ts';
import type { ReplyWaiter } from '../commands/replies.ts';

// Tracing at the buildApp tier: tracing ON with an in-memory exporter, the real command
// log port over an in-memory sink, and the projector's side of the headers (withIncomingCommand,
// what projector.ts wraps every apply in). The chain through the real broker is
// tests/integration/tracing.int.test.ts.
let tracing: Awaited<ReturnType<typeof startTracingInMemory>>;
beforeAll(async () => {
  tracing = await startTracingInMemory();
});
afterAll(() => tracing.shutdown());
beforeEach(() => tracing.reset());

const sent: OutgoingMessage[] = [];
const sink: MessageSink = {
  send: async (m) => void sent.push(m),
  sendMany: async (ms) => void sent.push(...ms),
  close: async () => {},
};
const replies: ReplyWaiter = { register: () => ({ wait: async () => null, cancel: () => {} }), close: async () => {} };

async function start(): Promise<{ url: string; lines: Array<Record<string, unknown>>; close(): void }> {
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
    commandLog: createCommandLog(sink, 'ingest.commands'),
    replies,
    dryRunner: { run: () => Promise.reject(new Error('no dry runs here')) },
    pool: { query: async () => ({ rows: [], rowCount: 0 }) } as unknown as Pool,
    log: createLogger({ name: 'gateway', destination }),
    registry: createRegistry(),
  });
  const server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, lines, close: () => server.close() };
}

const upstream = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7' };

describe('a trace from the HTTP request to the projector apply', () => {
  it('request span -> produce span -> apply span: one trace id, each the parent of the next; the command bytes carry none of it', async () => {
    sent.length = 0;
    const gw = await start();
    try {
      const res = await fetch(`${gw.url}/api/ingest/products`, {
        method: 'POST',
        headers: {
          'x-ingest-secret': 's',
          'content-type': 'application/json',
          traceparent: `00-${upstream.traceId}-${upstream.spanId}-01`,
          'x-request-id': 'req-trace-1',
        },
        body: JSON.stringify({ shop: 'a.example', products: [] }),
      });
      expect(res.status).toBe(202);
      expect(res.headers.get('x-request-id')).toBe('req-trace-1');
    } finally {
      gw.close();
    }
    const record = sent[0] as OutgoingMessage;
    const headers = record.headers ?? {};
    expect(headers['traceparent']).toMatch(new RegExp(`^00-${upstream.traceId}-[0-9a-f]{16}-01$`));
    expect(headers['request_id']).toBe('req-trace-1');
    // Headers are not part of the command (replay determinism): the value is the envelope alone.
    const command = JSON.parse(record.value) as Record<string, unknown>;
    expect(record.value).toBe(JSON.stringify(command));
    expect(record.value).not.toContain(upstream.traceId);
    expect(record.value).not.toContain('req-trace-1');

    // The projector's side: the record as the consumer hands it over.
    const lines: string[] = [];
    const log = createLogger({
      name: 'projector',
      destination: new Writable({ write: (c: Buffer, _e, done) => (lines.push(c.toString()), done()) }),
    }).child({ component: 'projector' });
    await withIncomingCommand(
      { headers, topic: record.topic, partition: 0, offset: '7' },
      `apply ${String(command['kind'])}`,
      {},
      async () => {
        log.info('applied');
      },
    );

    const spans = tracing.spans();
    const server = spans.find((s) => s.kind === SpanKind.SERVER);
    const produce = spans.find((s) => s.kind === SpanKind.PRODUCER);
    const apply = spans.find((s) => s.kind === SpanKind.CONSUMER);
    expect(server).toMatchObject({ name: 'POST /api/ingest/products', traceId: upstream.traceId, parentSpanId: upstream.spanId });
    expect(server?.attributes['http.response.status_code']).toBe(202);
    expect(produce).toMatchObject({ name: 'send ingest.commands', traceId: upstream.traceId, parentSpanId: server?.spanId });
    expect(produce?.attributes['ingest.command_id']).toBe(command['command_id']);
    expect(headers['traceparent']).toBe(`00-${upstream.traceId}-${produce?.spanId}-01`);
    expect(apply).toMatchObject({ name: 'apply products.upsert', traceId: upstream.traceId, parentSpanId: produce?.spanId });
    // The projector's line for that command: the request id and the apply span.
    expect(JSON.parse(lines[0] as string)).toMatchObject({
      request_id: 'req-trace-1',
      trace_id: upstream.traceId,
      span_id: apply?.spanId,
      component: 'projector',
    });
  });

  it('a request without traceparent starts a trace of its own; an error answer ends its span too', async () => {
    const gw = await start();
    try {
      const res = await fetch(`${gw.url}/api/ingest/products`, { method: 'POST', headers: { 'x-ingest-secret': 'wrong' }, body: '{}' });
      expect(res.status).toBe(401);
    } finally {
      gw.close();
    }
    const [server] = tracing.spans();
    expect(server).toMatchObject({ kind: SpanKind.SERVER, parentSpanId: undefined, name: 'POST /api/ingest/products' });
    expect(server?.attributes['http.response.status_code']).toBe(401);
  });
});
