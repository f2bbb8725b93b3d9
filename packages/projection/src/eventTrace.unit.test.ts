import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inSpan } from '@ingest/runtime';
import { startTracingInMemory } from '@ingest/runtime/testing';
import { eventTraceHeaders } from './applyCommand.ts';

// The trace context an event carries (CloudEvents distributed tracing): the apply span's with
// tracing on, else the command record's as it came, and nothing from a malformed one.
const RECORD = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

describe('eventTraceHeaders, tracing off', () => {
  it("passes the command record's context on, under both header names, with its tracestate", () => {
    expect(eventTraceHeaders({ traceparent: RECORD, tracestate: 'v=1', command_id: 'x' })).toEqual({
      ce_traceparent: RECORD,
      traceparent: RECORD,
      ce_tracestate: 'v=1',
      tracestate: 'v=1',
    });
    expect(eventTraceHeaders({ traceparent: RECORD })).toEqual({ ce_traceparent: RECORD, traceparent: RECORD });
  });
  it('adds nothing without a context, or with a malformed or all-zero one', () => {
    expect(eventTraceHeaders(undefined)).toEqual({});
    expect(eventTraceHeaders({ command_id: 'x' })).toEqual({});
    expect(eventTraceHeaders({ traceparent: 'garbage' })).toEqual({});
    expect(eventTraceHeaders({ traceparent: `00-${'0'.repeat(32)}-b7ad6b7169203331-01` })).toEqual({});
    expect(eventTraceHeaders({ traceparent: `00-0af7651916cd43dd8448eb211c80319c-${'0'.repeat(16)}-01` })).toEqual({});
  });
});

describe('eventTraceHeaders, tracing on', () => {
  let tracing: Awaited<ReturnType<typeof startTracingInMemory>>;
  beforeAll(async () => {
    tracing = await startTracingInMemory();
  });
  afterAll(async () => {
    await tracing.shutdown();
  });
  it("takes the active span's context (the apply span), not the record's", async () => {
    const headers = await inSpan('apply products.upsert', {}, async (span) => {
      const h = eventTraceHeaders({ traceparent: RECORD });
      expect(span).toBeDefined();
      expect(h['ce_traceparent']).toBe(`00-${span!.spanContext().traceId}-${span!.spanContext().spanId}-01`);
      return h;
    });
    expect(headers['traceparent']).toBe(headers['ce_traceparent']);
    expect(headers['ce_traceparent']).not.toBe(RECORD);
  });
});
