import type { CommandEnvelope } from '@ingest/contracts/types';
import {
  SpanKind,
  contextFromHeaders,
  currentRequestId,
  inSpan,
  injectTraceHeaders,
  withLogContext,
  type Context,
  type Link,
  type Span,
} from '@ingest/runtime';
import type { IncomingMessage } from './consumer.ts';
import type { MessageSink } from './producer.ts';

// The command topic's two ends: the gateway appends a command with the headers that tie it to its
// request (createCommandLog); the projector runs the work on it as that request's continuation
// (withIncomingCommand).

/**
 * What the port reads of a command envelope (schemas/commands/envelope.json, the generated
 * CommandEnvelope): its id, kind and shop; the rest is written as it is.
 */
export type CommandEnvelopeLike = Pick<CommandEnvelope, 'command_id' | 'kind' | 'shop'> & { [field: string]: unknown };

export interface CommandLog {
  /** Appends a command keyed by shop (D2); resolves once the broker acknowledged it. */
  appendCommand(command: CommandEnvelopeLike): Promise<void>;
}

/**
 * The record headers of a command: its id and kind, and what lets the projector's work be found
 * from the request's: the request id and the W3C trace context. Headers are not part of
 * the command: the value stays exactly the envelope's JSON, so a replay decodes the same bytes.
 */
export function commandHeaders(command: CommandEnvelopeLike): Record<string, string> {
  const headers: Record<string, string> = { command_id: command.command_id, kind: command.kind };
  const requestId = currentRequestId();
  if (requestId) headers['request_id'] = requestId;
  injectTraceHeaders(headers);
  return headers;
}

export function createCommandLog(sink: MessageSink, topic: string): CommandLog {
  return {
    appendCommand: (command) =>
      // The producer span is the parent the projector's apply continues from (tracing off: no span).
      inSpan(
        `send ${topic}`,
        {
          kind: SpanKind.PRODUCER,
          attributes: {
            'messaging.system': 'kafka',
            'messaging.operation.type': 'send',
            'messaging.destination.name': topic,
            'messaging.kafka.message.key': command.shop,
            'ingest.command_id': command.command_id,
            'ingest.command_kind': command.kind,
          },
        },
        () => sink.send({ topic, key: command.shop, value: JSON.stringify(command), headers: commandHeaders(command) }),
      ),
  };
}

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
