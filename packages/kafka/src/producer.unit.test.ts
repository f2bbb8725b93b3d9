import type { Kafka } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { classifyKafkaError, KafkaPortError } from './errors.ts';
import { createMessageSink } from './producer.ts';

// Found by the fault suite (broker kill -9): a send that timed out was answered "not appended,
// retry" but was still sent when the broker came back, so a retried keyless delta applied twice.
// Our adapter around kafkajs, with the broker's side stood in by a sendBatch the test controls.
function fakeKafka() {
  const calls: Array<{ resolve: () => void; reject: (e: Error) => void; topics: unknown }> = [];
  const kafka = {
    producer: () => ({
      connect: async () => {},
      disconnect: async () => {},
      sendBatch: (req: { topicMessages: unknown }) =>
        new Promise<void>((resolve, reject) => calls.push({ resolve, reject, topics: req.topicMessages })),
    }),
  } as unknown as Kafka;
  return { kafka, calls };
}

const message = (n: number) => ({ topic: 't', key: 'shop', value: String(n) });

describe('message sink timeouts', () => {
  it('a message never handed to the broker is taken out on timeout: certainly not appended (kafka_timeout)', async () => {
    const { kafka, calls } = fakeKafka();
    const sink = await createMessageSink(kafka, { sendTimeoutMs: 30 });
    const first = sink.send(message(1)).catch((e: unknown) => e);
    const second = sink.send(message(2)).catch((e: unknown) => e); // queued behind the first, in flight
    expect(classifyKafkaError(await second).code).toBe('kafka_timeout');
    calls[0]?.resolve(); // the broker acknowledges the first after all
    await new Promise((r) => setTimeout(r, 10));
    expect(calls).toHaveLength(1); // the second was never sent
    await first;
  });

  it('a message in flight when the timer fires is kafka_unknown_outcome, and its outcome says what happened', async () => {
    const { kafka, calls } = fakeKafka();
    const sink = await createMessageSink(kafka, { sendTimeoutMs: 30 });
    const err = await sink.send(message(1)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KafkaPortError);
    expect(classifyKafkaError(err).code).toBe('kafka_unknown_outcome');
    const outcome = (err as KafkaPortError).outcome!;
    calls[0]?.reject(new Error('broker gone'));
    await expect(outcome).rejects.toThrow();

    const again = (await sink.send(message(2)).catch((e: unknown) => e)) as KafkaPortError;
    calls[1]?.resolve();
    await expect(again.outcome).resolves.toBeUndefined();
  });
});
