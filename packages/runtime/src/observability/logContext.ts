import { AsyncLocalStorage } from 'node:async_hooks';
import { trace } from '@opentelemetry/api';

/** What every log line written on behalf of one request (or one command) carries. */
export interface LogContext {
  request_id?: string;
}

const store = new AsyncLocalStorage<LogContext>();
let tracing = false;

/** Runs `fn` with this request id on every log line it writes, however deep. */
export function withLogContext<T>(ctx: LogContext, fn: () => T): T {
  return store.run(ctx, fn);
}

/** The request id of the work in progress, if any (the command log puts it in the record headers). */
export function currentRequestId(): string | undefined {
  return store.getStore()?.request_id;
}

/** Set by the tracing module when an SDK is running; off, no span is looked up. */
export function setLogTracing(on: boolean): void {
  tracing = on;
}

/** The fields the logger's mixin adds: request_id, and trace_id/span_id of the active span. */
export function logContextFields(): Record<string, string> | undefined {
  const ctx = store.getStore();
  const span = tracing ? trace.getActiveSpan()?.spanContext() : undefined;
  if (!ctx?.request_id && !span) return undefined;
  const fields: Record<string, string> = {};
  if (ctx?.request_id) fields['request_id'] = ctx.request_id;
  if (span) {
    fields['trace_id'] = span.traceId;
    fields['span_id'] = span.spanId;
  }
  return fields;
}
