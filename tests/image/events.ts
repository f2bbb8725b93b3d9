// The stock events the projector container's relay publishes, read with kafkajs from the topics of
// this run, to check that a level taken to zero arrives as a `stock_zero` on the stock-zero topic.
import { Kafka, logLevel } from 'kafkajs';
import type { ExpectedStockEvent } from './writes.ts';

export interface StockEvent {
  topic: 'stockZero' | 'stockRestored';
  eventType: string;
  shop: string;
  barcode: string;
  locationId: string;
  seq: number;
  ceType: string;
}

export interface StockEventReader {
  events: StockEvent[];
  /** Resolves with the expected events not seen within `timeoutMs` ([] when all arrived). */
  waitFor(expected: ExpectedStockEvent[], shop: string, timeoutMs: number): Promise<ExpectedStockEvent[]>;
  close(): Promise<void>;
}

export async function readStockEvents(
  brokers: string[],
  topics: { stockZero: string; stockRestored: string },
  runId: string,
): Promise<StockEventReader> {
  const kafka = new Kafka({ clientId: `image-test-${runId}`, brokers, logLevel: logLevel.NOTHING });
  const consumer = kafka.consumer({ groupId: `image-test-${runId}-events`, sessionTimeout: 10_000 });
  const byTopic = new Map<string, StockEvent['topic']>([
    [topics.stockZero, 'stockZero'],
    [topics.stockRestored, 'stockRestored'],
  ]);
  const events: StockEvent[] = [];
  await consumer.connect();
  await consumer.subscribe({ topics: [...byTopic.keys()], fromBeginning: true });
  await consumer.run({
    eachMessage: async ({ topic, message }) => {
      const p = JSON.parse(message.value?.toString('utf8') ?? '{}') as Record<string, unknown>;
      events.push({
        topic: byTopic.get(topic)!,
        eventType: String(p['event_type']),
        shop: String(p['shop']),
        barcode: String(p['barcode']),
        locationId: String(p['location_id']),
        seq: Number(p['seq']),
        ceType: message.headers?.['ce_type']?.toString() ?? '',
      });
    },
  });
  const seen = (e: ExpectedStockEvent, shop: string) =>
    events.some(
      (x) => x.topic === e.topic && x.shop === shop && x.barcode === e.barcode && x.locationId === e.locationId && x.seq === e.seq,
    );
  return {
    events,
    waitFor: async (expected, shop, timeoutMs) => {
      const until = Date.now() + timeoutMs;
      while (Date.now() < until && !expected.every((e) => seen(e, shop))) await new Promise((r) => setTimeout(r, 200));
      return expected.filter((e) => !seen(e, shop));
    },
    close: () => consumer.disconnect(),
  };
}
