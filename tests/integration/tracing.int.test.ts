import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SpanKind, createLogger } from '@ingest/runtime';
import { startTracingInMemory } from '@ingest/runtime/testing';
import { collectTopics } from '../support/inventory.ts';
import { INGEST_SECRET, get, post, startPipeline, waitFor, type TestPipeline } from '../support/pipeline.ts';

// Tracing (docs/operations.md "Tracing and logs") through the real broker and database: the
// trace and the request id of an HTTP request continue in the projector's apply, one by one and
// in a group transaction.
let p: TestPipeline;
let tracing: Awaited<ReturnType<typeof startTracingInMemory>>;
const lines: Array<Record<string, unknown>> = [];

beforeAll(async () => {
  tracing = await startTracingInMemory();
  const destination = new Writable({
    write(chunk: Buffer, _e, done) {
      for (const l of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  p = await startPipeline({ log: createLogger({ name: 'ingest', level: 'debug', destination }) });
});
afterAll(async () => {
  await p.stop();
  await tracing.shutdown();
});

const traceparent = () => {
  const traceId = randomUUID().replaceAll('-', '');
  return { traceId, header: `00-${traceId}-${randomUUID().replaceAll('-', '').slice(0, 16)}-01` };
};
const products = (shop: string, price: number) => ({ shop, products: [{ barcode: 'T', product_name: 'Traced', current_price: price }] });

describe('a request traced into the projector', () => {
  it('one command: request -> send -> apply in one trace, and the projector line carries the request id', async () => {
    const shop = `trace-${randomUUID().slice(0, 6)}.example`;
    const t = traceparent();
    const res = await post(`${p.url()}/api/ingest/products`, products(shop, 1), {
      'x-ingest-secret': INGEST_SECRET,
      traceparent: t.header,
      'x-request-id': 'int-req-1',
    });
    expect(res.status).toBe(200);
    const spans = await waitFor(
      async () => {
        const mine = tracing.spans().filter((s) => s.traceId === t.traceId);
        return mine.some((s) => s.kind === SpanKind.CONSUMER) ? mine : undefined;
      },
      15_000,
      'apply span',
    );
    const server = spans.find((s) => s.kind === SpanKind.SERVER);
    const send = spans.find((s) => s.kind === SpanKind.PRODUCER);
    const apply = spans.find((s) => s.kind === SpanKind.CONSUMER);
    expect(server?.name).toBe('POST /api/ingest/products');
    expect(send?.parentSpanId).toBe(server?.spanId);
    expect(apply).toMatchObject({ name: 'apply products.upsert', parentSpanId: send?.spanId });
    const projected = lines.find((l) => l['msg'] === 'command projected' && l['request_id'] === 'int-req-1');
    expect(projected).toMatchObject({ trace_id: t.traceId, span_id: apply?.spanId, kind: 'products.upsert' });
  });

  it("the command's events carry its trace (CloudEvents distributed tracing): ce_traceparent is the apply span, in the request's trace", async () => {
    const shop = `trace-events-${randomUUID().slice(0, 6)}.example`;
    const audit = await collectTopics(p, [p.topics.audit]);
    try {
      const t = traceparent();
      const res = await post(`${p.url()}/api/ingest/products`, products(shop, 1), {
        'x-ingest-secret': INGEST_SECRET,
        traceparent: t.header,
      });
      expect(res.status).toBe(200);
      const event = await audit.waitFor((m) => m.value?.shop === shop, 'the audit event of the write');
      const apply = await waitFor(
        async () => tracing.spans().find((s) => s.traceId === t.traceId && s.kind === SpanKind.CONSUMER),
        15_000,
        'apply span',
      );
      expect(event.headers['ce_traceparent']).toBe(`00-${t.traceId}-${apply.spanId}-01`);
      expect(event.headers['traceparent']).toBe(event.headers['ce_traceparent']);
    } finally {
      await audit.stop();
    }
  });

  it('a group transaction: one group span linked to each request; each command keeps its apply span in its own trace', async () => {
    const shop = `trace-group-${randomUUID().slice(0, 6)}.example`;
    await p.stopProjector();
    const requests: Array<{ traceId: string; header: string; resultUrl: string; requestId: string }> = [];
    for (let i = 0; i < 4; i++) {
      const t = traceparent();
      const r = await post(`${p.url()}/api/ingest/products`, products(shop, i), {
        'x-ingest-secret': INGEST_SECRET,
        Prefer: 'respond-async',
        traceparent: t.header,
        'x-request-id': `int-group-${i}`,
      });
      expect(r.status).toBe(202);
      requests.push({ ...t, resultUrl: String(r.json.result_url), requestId: `int-group-${i}` });
    }
    await p.startProjector();
    for (const r of requests)
      await waitFor(
        async () => (await get(`${p.url()}${r.resultUrl}`, { 'x-ingest-secret': INGEST_SECRET })).status === 200,
        20_000,
        'applied',
      );

    // A result is readable once the group's transaction committed, a moment before the projector
    // ends the group's span: wait for the spans rather than read them once.
    const { spans, groups } = await waitFor(
      async () => {
        const spans = tracing.spans();
        const groups = spans.filter(
          (s) =>
            s.name === 'apply group' &&
            requests.some((r) => s.links.length > 0 && spans.some((x) => x.traceId === r.traceId && s.links.includes(x.spanId))),
        );
        const applied = requests.every((r) => spans.some((s) => s.traceId === r.traceId && s.kind === SpanKind.CONSUMER));
        return groups.length > 0 && applied ? { spans, groups } : undefined;
      },
      10_000,
      'a group span and every apply span',
    );
    expect(groups.length).toBeGreaterThan(0); // the 4 may be split over batches, but at least one group forms
    for (const r of requests) {
      const send = spans.find((s) => s.traceId === r.traceId && s.kind === SpanKind.PRODUCER);
      const applies = spans.filter((s) => s.traceId === r.traceId && s.kind === SpanKind.CONSUMER);
      expect(applies.length).toBeGreaterThan(0);
      for (const a of applies) expect(a.parentSpanId).toBe(send?.spanId);
      const inGroup = applies.find((a) => a.links.length > 0);
      if (inGroup) {
        const group = spans.find((s) => s.spanId === inGroup.links[0]);
        expect(group?.name).toBe('apply group');
        expect(group?.links).toContain(send?.spanId);
      }
      expect(
        lines.some(
          (l) => String(l['msg']).startsWith('command projected') && l['request_id'] === r.requestId && l['trace_id'] === r.traceId,
        ),
      ).toBe(true);
    }
  });
});
