import type { MessageSink } from './producer.ts';

/** A command envelope (schemas/commands/envelope.json); the port needs its id, kind and shop. */
export interface CommandEnvelopeLike {
  command_id: string;
  kind: string;
  shop: string;
  [field: string]: unknown;
}

export interface CommandLog {
  /** Appends a command keyed by shop (D2); resolves once the broker acknowledged it. */
  appendCommand(command: CommandEnvelopeLike): Promise<void>;
}

export function createCommandLog(sink: MessageSink, topic: string): CommandLog {
  return {
    appendCommand: (command) =>
      sink.send({
        topic,
        key: command.shop,
        value: JSON.stringify(command),
        headers: { command_id: command.command_id, kind: command.kind },
      }),
  };
}
