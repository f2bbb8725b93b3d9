import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createKafka, type Kafka } from './client.ts';
import { restartDelayMs, runConsumer, type RunningConsumer } from './consumer.ts';

// A member of the group outlives a crash kafkajs does not restart from. A TypeError in the fetch
// loop (kafkajs' own, during a rebalance, or a handler's) is such a crash: kafkajs disconnects the
// consumer and, without runConsumer's rebuild, the process stays up consuming nothing.
const topic = `consumer-restart-${randomUUID()}`;
let kafka: Kafka;
const running: RunningConsumer[] = [];

beforeAll(async () => {
  kafka = createKafka({ brokers: inject('kafkaBrokers'), clientId: 'test-consumer-restart' });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
  await admin.disconnect();
  const producer = kafka.producer();
  await producer.connect();
  await producer.send({
    topic,
    messages: [
      { key: 'k', value: 'one' },
      { key: 'k', value: 'two' },
    ],
  });
  await producer.disconnect();
});
afterAll(async () => {
  await Promise.all(running.map((c) => c.stop()));
  const admin = kafka.admin();
  await admin.connect();
  await admin.deleteTopics({ topics: [topic] }).catch(() => {});
  await admin.disconnect();
});

async function until(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('runConsumer after a crash kafkajs does not restart from', () => {
  it('rebuilds the member after the backoff, which reads again from the committed offset and rejoins', async () => {
    const seen: string[] = [];
    const logged: { msg: string; cause?: string }[] = [];
    let thrown = false;
    let rebuilt = 0;
    const consumer = await runConsumer(kafka, {
      groupId: `test-restart-${randomUUID()}`,
      topics: [topic],
      maxWaitTimeMs: 100,
      onRebuild: () => rebuilt++,
      log: { warn: () => {}, error: (o, msg) => logged.push({ msg, cause: (o as { cause?: string }).cause }) },
      eachBatch: async (messages, ctx) => {
        for (const m of messages) {
          seen.push(String(m.value));
          if (!thrown) {
            thrown = true;
            // What kafkajs treats as unrecoverable (retry/index.js): no restart of its own.
            throw new TypeError("Cannot read properties of undefined (reading '3')");
          }
          ctx.resolveOffset(m.offset);
        }
      },
    });
    running.push(consumer);

    await until(() => seen.length >= 3, 20_000, 'the messages after the rebuild');
    // 'one' failed and was not resolved, so the new member starts from it again.
    expect(seen.slice(0, 3)).toEqual(['one', 'one', 'two']);
    expect(consumer.restarts()).toBe(1);
    expect(rebuilt).toBe(1);
    const line = logged.find((l) => l.msg.includes('new member joins'));
    // Where the original error was thrown, not only kafkajs' wrapper.
    expect(line?.cause).toContain('consumer.int.test.ts');
    await until(() => consumer.joined(), 10_000, 'the rebuilt member to join');
  });

  it('a stop during the backoff ends it: no member comes back after stop()', async () => {
    let batches = 0;
    const consumer = await runConsumer(kafka, {
      groupId: `test-restart-stop-${randomUUID()}`,
      topics: [topic],
      maxWaitTimeMs: 100,
      eachBatch: async () => {
        batches += 1;
        throw new TypeError('boom');
      },
    });
    await until(() => batches === 1, 20_000, 'the first batch');
    await consumer.stop();
    await new Promise((r) => setTimeout(r, restartDelayMs(1) + 1000));
    expect(batches).toBe(1);
    expect(consumer.restarts()).toBe(0);
    expect(consumer.joined()).toBe(false);
  });
});
