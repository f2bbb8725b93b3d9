import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  context,
  propagation,
  trace,
  type Attributes,
  type Context,
  type Link,
  type Span,
  type SpanContext,
  type Tracer,
} from '@opentelemetry/api';
import type { SpanExporter } from '@opentelemetry/sdk-trace';
import { setting } from '../config/settings.ts';
import { setLogTracing } from './logContext.ts';

export { SpanKind, type Context, type Link, type Span };

/**
 * OpenTelemetry tracing. Off by default: then no SDK module is even loaded and every
 * helper below is a plain call of its callback. On with the standard variables:
 * OTEL_TRACES_EXPORTER=otlp|console (otlp sends to OTEL_EXPORTER_OTLP_ENDPOINT over HTTP),
 * OTEL_SERVICE_NAME, and OTEL_SDK_DISABLED=true turns it off whatever else is set.
 * Spans are made explicitly where the work crosses a boundary: the HTTP request (gateway), the
 * append to the command log (producer) and the apply of each command (projector); the W3C
 * `traceparent`/`tracestate` travel in the Kafka record headers, never in the command's bytes.
 * See docs/operations.md "Tracing and logs".
 */
export interface Tracing {
  enabled: boolean;
  /** Flushes the spans still buffered (waiting 2 s at most) and turns tracing off. */
  shutdown(): Promise<void>;
}

export interface TracingOptions {
  /** service.name unless OTEL_SERVICE_NAME says otherwise. */
  serviceName: string;
  /** Tests: spans go here (e.g. an InMemorySpanExporter), one by one, whatever the environment says. */
  exporter?: SpanExporter;
}

let tracer: Tracer | undefined;

/** How long shutdown waits for the last spans to reach the collector. */
const SHUTDOWN_FLUSH_MS = 2000;

/** Which exporter the environment asks for; null is off. */
export function tracesExporterWanted(env: NodeJS.ProcessEnv): 'otlp' | 'console' | null {
  if (setting(env, 'OTEL_SDK_DISABLED')) return null;
  const wanted = setting(env, 'OTEL_TRACES_EXPORTER');
  return wanted === undefined || wanted === 'none' ? null : wanted;
}

export async function startTracing(env: NodeJS.ProcessEnv, opts: TracingOptions): Promise<Tracing> {
  const wanted = tracesExporterWanted(env);
  if (!opts.exporter && wanted === null) return { enabled: false, shutdown: async () => {} };
  if (tracer) throw new Error('tracing is already started in this process');
  const [sdk, { AsyncLocalStorageContextManager }, { W3CTraceContextPropagator }, { resourceFromAttributes }] = await Promise.all([
    import('@opentelemetry/sdk-trace'),
    import('@opentelemetry/context-async-hooks'),
    import('@opentelemetry/core'),
    import('@opentelemetry/resources'),
  ]);
  let processor;
  if (opts.exporter) processor = new sdk.SimpleSpanProcessor({ exporter: opts.exporter });
  else if (wanted === 'console') processor = new sdk.SimpleSpanProcessor({ exporter: new sdk.ConsoleSpanExporter() });
  else {
    const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
    processor = new sdk.BatchSpanProcessor({ exporter: new OTLPTraceExporter(otlpUrl(env)) });
  }
  const provider = new sdk.TracerProvider({
    resource: resourceFromAttributes({ 'service.name': setting(env, 'OTEL_SERVICE_NAME') || opts.serviceName }),
    spanProcessors: [processor],
  });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  tracer = trace.getTracer('ingest');
  setLogTracing(true);
  return {
    enabled: true,
    shutdown: async () => {
      // A collector that does not answer must not hold the process past its grace period.
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, SHUTDOWN_FLUSH_MS).unref()));
      await Promise.race([provider.shutdown().catch(() => {}), late]);
      clearTimeout(timer);
      tracer = undefined;
      setLogTracing(false);
      trace.disable();
      propagation.disable();
      context.disable();
    },
  };
}

/** The standard endpoint variables, read from `env` (not only process.env); none: the exporter's default. */
function otlpUrl(env: NodeJS.ProcessEnv): { url: string } | undefined {
  const traces = setting(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  if (traces) return { url: traces };
  const base = setting(env, 'OTEL_EXPORTER_OTLP_ENDPOINT');
  return base ? { url: `${base.replace(/\/+$/, '')}/v1/traces` } : undefined;
}

export function tracingOn(): boolean {
  return tracer !== undefined;
}

export interface SpanOptions {
  kind?: SpanKind;
  attributes?: Attributes;
  /** The parent; default the active context. */
  parent?: Context;
  links?: Link[];
}

/** Starts a span the caller ends (an HTTP request ends on `finish`); undefined while tracing is off. */
export function startSpan(name: string, opts: SpanOptions = {}): { span: Span; context: Context } | undefined {
  if (!tracer) return undefined;
  const parent = opts.parent ?? context.active();
  const span = tracer.startSpan(
    name,
    { kind: opts.kind ?? SpanKind.INTERNAL, attributes: opts.attributes ?? {}, links: opts.links ?? [] },
    parent,
  );
  return { span, context: trace.setSpan(parent, span) };
}

/** Runs `fn` inside a new span (ended when `fn` settles; a throw marks it failed). Off: just `fn()`. */
export async function inSpan<T>(name: string, opts: SpanOptions, fn: (span: Span | undefined) => Promise<T>): Promise<T> {
  const started = startSpan(name, opts);
  if (!started) return fn(undefined);
  try {
    return await context.with(started.context, () => fn(started.span));
  } catch (err) {
    markFailed(started.span, err);
    throw err;
  } finally {
    started.span.end();
  }
}

export function markFailed(span: Span, err: unknown): void {
  span.recordException(err instanceof Error ? err : String(err));
  span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
}

/** Runs `fn` with `ctx` as the active context (tracing off: just `fn()`). */
export function withContext<T>(ctx: Context | undefined, fn: () => T): T {
  return tracer && ctx ? context.with(ctx, fn) : fn();
}

/** Adds `traceparent` (and `tracestate`) of the active span to `carrier`; nothing while off. */
export function injectTraceHeaders(carrier: Record<string, string>): void {
  if (tracer) propagation.inject(context.active(), carrier);
}

/** The remote context `traceparent`/`tracestate` in these headers describe; undefined when none. */
export function contextFromHeaders(headers: Record<string, string | string[] | undefined>): Context | undefined {
  if (!tracer || headers['traceparent'] === undefined) return undefined;
  const ctx = propagation.extract(ROOT_CONTEXT, headers);
  return trace.getSpanContext(ctx) ? ctx : undefined;
}

/** The span context of `ctx` (for links). */
export function spanContextOf(ctx: Context | undefined): SpanContext | undefined {
  return ctx ? trace.getSpanContext(ctx) : undefined;
}
