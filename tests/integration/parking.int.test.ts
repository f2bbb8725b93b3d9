import { randomUUID } from 'node:crypto';
import { Partitioners } from 'kafkajs';
import { v7 as uuidv7 } from 'uuid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SchemaRegistry } from '@ingest/contracts';
import { createCommandLog, createKafka, createMessageSink, type MessageSink } from '@ingest/kafka';
import { listParked, retryParked, skipParked } from '@ingest/projector';
import { documentedAnswers } from '../support/openapi.ts';
import { INGEST_SECRET, get, post, startPipeline, type TestPipeline } from '../support/pipeline.ts';

// Issue 11, poison isolation per shop: a command that fails for a reason retrying cannot fix is
// parked after bounded tries; its shop's later commands park behind it (D2) while the other shops
// of the same partition keep flowing; an operator skips or retries.
let p: TestPipeline;
let sink: MessageSink;

beforeAll(async () => {
  p = await startPipeline({ env: { PROJECTOR_RETRY_BACKOFF: '10ms' } });
  sink = await createMessageSink(createKafka({ brokers: p.brokers, clientId: `test-${p.id}-poison` }));
});
afterAll(async () => {
  await sink.close();
  await p.stop();
});

const ING = { 'x-ingest-secret': INGEST_SECRET };
const products = (shop: string, barcodes: string[]) =>
  post(`${p.url()}/api/ingest/products`, { shop, products: barcodes.map((b) => ({ barcode: b, product_name: `P ${b}` })) }, ING);
const status = (commandId: string) => get(`${p.url()}/api/commands/${commandId}`, ING);

/** A shop whose commands land on the same partition as `shop`'s (the producer's default partitioner). */
function neighbourOf(shop: string): string {
  const partitioner = Partitioners.DefaultPartitioner();
  const partitionMetadata = [0, 1, 2].map((partitionId) => ({ partitionId, leader: 0, partitionErrorCode: 0, replicas: [0], isr: [0] }));
  const partitionOf = (key: string) => partitioner({ topic: p.topics.commands, partitionMetadata, message: { key, value: null } });
  for (let i = 0; ; i++) {
    const candidate = `neighbour-${i}-${shop}`;
    if (partitionOf(candidate) === partitionOf(shop)) return candidate;
  }
}

describe('parking (issue 11)', () => {
  it('parks a poison command and its shop behind it, lets the partition flow, and resolves by skip and retry in order', async () => {
    const shop = `poison-${randomUUID().slice(0, 6)}.example`;
    const neighbour = neighbourOf(shop);
    expect((await products(shop, ['P1'])).status).toBe(200);

    // Well-formed, but PostgreSQL cannot store its date: it fails the same way every time.
    const poisonId = uuidv7();
    await createCommandLog(sink, p.topics.commands).appendCommand({
      command_id: poisonId,
      kind: 'inventory.daily_snapshot',
      shop,
      received_at: new Date().toISOString(),
      source: { endpoint: 'test' },
      payload: { snapshot_date: '0000-01-01' },
    });

    // The caller of the shop's next command is told it is parked, behind the poison.
    const behind = await products(shop, ['P2']);
    expect(behind.status).toBe(202);
    expect(behind.json).toMatchObject({ ok: true, status: 'parked', waiting_behind: poisonId });
    const behindId = behind.json.command_id as string;

    // Another shop on the same partition keeps flowing.
    const other = await products(neighbour, ['N1']);
    expect(other.status).toBe(200);
    expect(other.json).toMatchObject({ ok: true, created: 1 });

    const poison = await status(poisonId);
    expect(poison.status).toBe(202);
    expect(poison.json).toMatchObject({ ok: true, status: 'parked', command_id: poisonId, waiting_behind: null });
    expect(poison.json.error).toMatch(/out of range/);
    // Issue 15: both parked answers are what the served OpenAPI document says.
    const documented = await documentedAnswers(p.url());
    expect(documented('post', '/api/ingest/products', behind)).toBeNull();
    expect(documented('get', '/api/commands/{id}', poison)).toBeNull();
    expect((await listParked(p.db)).map((r) => r.command_id)).toEqual([poisonId, behindId]);

    // Retrying the poison fails again: it stays parked, and so does the command behind it.
    const retried = await retryParked(p.db, new SchemaRegistry(), p.topics, poisonId);
    expect(retried).toMatchObject({ applied: [], failed: { command_id: poisonId } });
    expect((await status(behindId)).json.status).toBe('parked');

    expect(await skipParked(p.db, poisonId)).toEqual({ remaining: 1 });
    const skipped = await status(poisonId);
    expect(skipped.status).toBe(422);
    expect(skipped.json).toMatchObject({ ok: false, error_kind: 'skipped' });

    expect(await retryParked(p.db, new SchemaRegistry(), p.topics, behindId)).toEqual({ applied: [behindId], failed: null });
    const applied = await status(behindId);
    expect(applied.status).toBe(200);
    expect(applied.json).toMatchObject({ ok: true, created: 1 });
    expect(await listParked(p.db)).toEqual([]);

    // The shop flows again, and nothing was applied twice.
    expect((await products(shop, ['P3'])).json).toMatchObject({ ok: true, created: 1 });
    const { rows } = await p.db.query(
      `SELECT barcode, count(*)::int AS n FROM public.product_update_logs WHERE shop = $1 GROUP BY 1 ORDER BY 1`,
      [shop],
    );
    expect(rows).toEqual([
      { barcode: 'P1', n: 1 },
      { barcode: 'P2', n: 1 },
      { barcode: 'P3', n: 1 },
    ]);
  });
});
