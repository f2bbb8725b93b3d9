import { SpanKind, contextFromHeaders, inSpan, withLogContext, type Context, type Link, type Span } from '@ingest/runtime';
import type { IncomingMessage } from './consumer.ts';

/** What a command's record headers say about the request it came from. */
export interface IncomingCommandContext {
  requestId: string | undefined;
  /** The producer's span (remote parent); undefined when tracing is off or the record has none. */
  trace: Context | undefined;
}

export function commandContextOf(m: Pick<IncomingMessage, 'headers'>): IncomingCommandContext {
  return { requestId: m.headers['request_id'] || undefined, trace: contextFromHeaders(m.headers) };
}

/**
 * Runs the work on one command as its request's continuation: its log lines carry the request id
 * the gateway gave it, and (tracing on) a CONSUMER span, child of the span that appended it,
 * covers the work. `links` tie it to a group transaction it shares with other commands.
 */
export function withIncomingCommand<T>(
  m: Pick<IncomingMessage, 'headers' | 'topic' | 'partition' | 'offset'>,
  name: string,
  opts: { attributes?: Record<string, string | number>; links?: Link[] },
  fn: (span: Span | undefined) => Promise<T>,
): Promise<T> {
  const { requestId, trace } = commandContextOf(m);
  const run = () =>
    inSpan(
      name,
      {
        kind: SpanKind.CONSUMER,
        ...(trace ? { parent: trace } : {}),
        ...(opts.links ? { links: opts.links } : {}),
        attributes: {
          'messaging.system': 'kafka',
          'messaging.operation.type': 'process',
          'messaging.destination.name': m.topic,
          'messaging.destination.partition.id': String(m.partition),
          'messaging.kafka.offset': Number(m.offset),
          ...opts.attributes,
        },
      },
      fn,
    );
  return requestId ? withLogContext({ request_id: requestId }, run) : run();
}
