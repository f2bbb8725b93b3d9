import { injectTraceHeaders } from '@ingest/runtime';

const TRACEPARENT = /^[0-9a-f]{2}-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}$/;

/**
 * The W3C trace context an event of a command carries, so a subscriber continues the trace of the
 * retailer's request (CloudEvents distributed-tracing extension: `traceparent` and `tracestate`,
 * in Kafka binary mode the headers `ce_traceparent` and `ce_tracestate`; also the plain
 * `traceparent`/`tracestate` headers that OpenTelemetry's Kafka instrumentations read).
 * Tracing on: the command's apply span, itself a child of the request's. Tracing off here: the
 * context the command's record came with (the gateway's), passed on as it is. None: no headers.
 */
export function eventTraceHeaders(recordHeaders: Record<string, string> | undefined): Record<string, string> {
  const active: Record<string, string> = {};
  injectTraceHeaders(active);
  const source = active['traceparent'] !== undefined ? active : (recordHeaders ?? {});
  const traceparent = source['traceparent'];
  if (traceparent === undefined || !TRACEPARENT.test(traceparent)) return {};
  const tracestate = source['tracestate'];
  return {
    ce_traceparent: traceparent,
    traceparent,
    ...(tracestate ? { ce_tracestate: tracestate, tracestate } : {}),
  };
}
