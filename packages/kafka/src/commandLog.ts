import type { CommandEnvelope } from '@ingest/contracts/types';
import { SpanKind, currentRequestId, inSpan, injectTraceHeaders } from '@ingest/runtime';
import type { MessageSink } from './producer.ts';

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
