import { CompressionTypes, type Kafka, type Message, type Producer } from 'kafkajs';
import { KafkaPortError, classifyKafkaError } from './errors.ts';

export interface OutgoingMessage {
  topic: string;
  key: string;
  value: string;
  headers?: Record<string, string>;
}

export interface MessageSink {
  /** Resolves once the broker has the message (acks=all). */
  send(message: OutgoingMessage): Promise<void>;
  sendMany(messages: OutgoingMessage[]): Promise<void>;
  close(): Promise<void>;
}

export interface SinkOptions {
  /** A send that has not been acknowledged by then fails with kafka_timeout (default 10 s). */
  sendTimeoutMs?: number;
}

/**
 * An idempotent producer (acks=all, one request in flight, so per-key order holds through
 * retries). Concurrent sends are coalesced: while one request is in flight the next ones queue
 * and leave together, so a burst costs a few round trips rather than one per message.
 */
export async function createMessageSink(kafka: Kafka, opts: SinkOptions = {}): Promise<MessageSink> {
  const producer: Producer = kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    allowAutoTopicCreation: false,
    retry: { initialRetryTime: 100, retries: 5, maxRetryTime: 3000 },
  });
  await producer.connect();
  const timeoutMs = opts.sendTimeoutMs ?? 10000;
  type Pending = { messages: OutgoingMessage[]; resolve: () => void; reject: (e: Error) => void };
  let queue: Pending[] = [];
  let inFlight = false;

  const flush = async (): Promise<void> => {
    if (inFlight || queue.length === 0) return;
    inFlight = true;
    const batch = queue;
    queue = [];
    try {
      const byTopic = new Map<string, Message[]>();
      for (const p of batch)
        for (const m of p.messages) {
          const list = byTopic.get(m.topic) ?? [];
          list.push({ key: m.key, value: m.value, ...(m.headers ? { headers: m.headers } : {}) });
          byTopic.set(m.topic, list);
        }
      await producer.sendBatch({
        acks: -1,
        compression: CompressionTypes.GZIP,
        topicMessages: [...byTopic].map(([topic, messages]) => ({ topic, messages })),
      });
      for (const p of batch) p.resolve();
    } catch (err) {
      const failure = classifyKafkaError(err);
      for (const p of batch) p.reject(new KafkaPortError(failure, { cause: err }));
    } finally {
      inFlight = false;
      void flush();
    }
  };

  const sendMany = (messages: OutgoingMessage[]): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      // The batch's own result, whatever the caller was told meanwhile.
      let settleFinal: { resolve: () => void; reject: (e: Error) => void } = { resolve: () => {}, reject: () => {} };
      const final = new Promise<void>((res, rej) => (settleFinal = { resolve: res, reject: rej }));
      final.catch(() => {});
      let answered = false;
      const entry: Pending = {
        messages,
        resolve: () => {
          clearTimeout(timer);
          settleFinal.resolve();
          if (!answered) resolve();
          answered = true;
        },
        reject: (e: Error) => {
          clearTimeout(timer);
          settleFinal.reject(e);
          if (!answered) reject(e);
          answered = true;
        },
      };
      const timer = setTimeout(() => {
        answered = true;
        const waiting = queue.indexOf(entry);
        if (waiting >= 0) {
          // Never handed to the broker: taken out, so it is certainly not appended later.
          queue.splice(waiting, 1);
          reject(new KafkaPortError({ code: 'kafka_timeout', retriable: true, message: `no ack within ${timeoutMs} ms; not sent` }));
          return;
        }
        // In flight: the broker may still append it (the idempotent producer retries). Say so.
        reject(
          new KafkaPortError(
            { code: 'kafka_unknown_outcome', retriable: false, message: `no ack within ${timeoutMs} ms; sent, outcome unknown` },
            { outcome: final },
          ),
        );
      }, timeoutMs);
      queue.push(entry);
      void flush();
    });

  return {
    send: (m) => sendMany([m]),
    sendMany,
    close: () => producer.disconnect(),
  };
}
