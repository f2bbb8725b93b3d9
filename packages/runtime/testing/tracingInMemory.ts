import type { Attributes, SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { startTracing, type Tracing } from '../src/observability/tracing.ts';

/** Tracing on, every ended span kept in memory (the SDK is loaded only by this call). */
export async function startTracingInMemory(serviceName = 'test'): Promise<Tracing & { spans(): FinishedSpan[]; reset(): void }> {
  const { InMemorySpanExporter } = await import('@opentelemetry/sdk-trace');
  const exporter = new InMemorySpanExporter();
  const tracing = await startTracing({}, { serviceName, exporter });
  return {
    ...tracing,
    spans: () =>
      exporter.getFinishedSpans().map((s) => ({
        name: s.name,
        kind: s.kind,
        traceId: s.spanContext().traceId,
        spanId: s.spanContext().spanId,
        parentSpanId: s.parentSpanContext?.spanId,
        links: s.links.map((l) => l.context.spanId),
        attributes: { ...s.attributes },
        status: s.status.code,
      })),
    reset: () => exporter.reset(),
  };
}

/** An ended span as tests look at it. */
export interface FinishedSpan {
  name: string;
  kind: SpanKind;
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  /** Span ids of the linked spans. */
  links: string[];
  attributes: Attributes;
  status: SpanStatusCode;
}
