import { AsyncLocalStorage } from 'node:async_hooks';
import { trace } from '@opentelemetry/api';

/** What every log line written on behalf of one request (or one command) carries. */
export interface LogContext {
  request_id?: string;
  /** Who sent the request once it is authenticated (D28): a key id, or `platform`. */
  actor?: string;
}

const store = new AsyncLocalStorage<LogContext>();
let tracing = false;

/** Runs `fn` with this request id on every log line it writes, however deep. */
export function withLogContext<T>(ctx: LogContext, fn: () => T): T {
  return store.run(ctx, fn);
}

/**
 * Names who sent the request in progress on every later log line about it (D28: a key id, or
 * `platform`), and on its active span. Outside a request's context it does nothing.
 */
export function setLogActor(actor: string): void {
  const ctx = store.getStore();
  if (ctx) ctx.actor = actor;
  if (tracing) trace.getActiveSpan()?.setAttribute('ingest.actor', actor);
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
  if (!ctx?.request_id && !ctx?.actor && !span) return undefined;
  const fields: Record<string, string> = {};
  if (ctx?.request_id) fields['request_id'] = ctx.request_id;
  if (ctx?.actor) fields['actor'] = ctx.actor;
  if (span) {
    fields['trace_id'] = span.traceId;
    fields['span_id'] = span.spanId;
  }
  return fields;
}
