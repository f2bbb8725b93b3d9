import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { partitionForKey } from '@ingest/kafka';
import { INGEST_SECRET, get, post, startPipeline, waitFor, type TestPipeline } from '../support/pipeline.ts';

// One busy partition does not hold another's commands. The projector runs PROJECTOR_CONCURRENCY
// independent members of its group; before, it was one member with kafkajs' partitionsConsumedConcurrently,
// which fetches again only once every batch of the last fetch is applied: a command of a quiet shop
// waited for a noisy shop's group transaction on another partition (bench B6 with 4 shops: 7,800 ->
// 12,800 lines/s; B7's quiet shops).
let p: TestPipeline;
const PARTITIONS = 3; // the test topics' (tests/support/pipeline.ts); one per member here
beforeAll(async () => {
  p = await startPipeline({ env: { PROJECTOR_CONCURRENCY: String(PARTITIONS) } });
});
afterAll(async () => {
  await p.stop();
});

const h = { 'x-ingest-secret': INGEST_SECRET };
const upsert = (shop: string, barcode: string, headers: Record<string, string> = {}) =>
  post(`${p.url()}/api/ingest/products`, { shop, products: [{ barcode, product_name: barcode }] }, { ...h, ...headers });

/** A shop name whose commands go to the given partition. */
const shopOn = (partition: number, tag: string): string => {
  for (let i = 0; ; i++) {
    const shop = `${tag}-${i}-${randomUUID().slice(0, 4)}.example`;
    if (partitionForKey(shop, PARTITIONS) === partition) return shop;
  }
};

describe('partitions apply independently', () => {
  it("a command stuck in its transaction on one partition does not hold another partition's commands", async () => {
    const stuck = shopOn(0, 'stuck');
    const other = shopOn(1, 'other');
    // Both partitions' members are working (each shop's first command applied).
    expect((await upsert(stuck, 'FIRST')).status).toBe(200);
    expect((await upsert(other, 'FIRST')).status).toBe(200);

    // The test holds the stuck shop's lock (the one every projector transaction of that shop takes first).
    const holder = await p.db.connect();
    try {
      await holder.query('BEGIN');
      await holder.query(`SELECT pg_advisory_xact_lock(hashtextextended(current_schema() || '/' || $1, 0))`, [stuck]);
      const blocked = await upsert(stuck, 'BLOCKED', { Prefer: 'respond-async' });
      expect(blocked.status).toBe(202);
      await waitFor(
        async () =>
          (
            await p.db.query(
              `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event = 'advisory'`,
            )
          ).rows.length > 0,
        15_000,
        'the stuck shop waiting in its transaction',
      );
      // Sent after the stuck batch was fetched: with one member, its next fetch waited for that batch.
      for (let i = 0; i < 3; i++) {
        const r = await upsert(other, `MEANWHILE-${i}`);
        expect(r.status, r.text).toBe(200);
        expect(r.json).toMatchObject({ created: 1 });
      }
      expect((await get(`${p.url()}${blocked.json.result_url}`, h)).status).toBe(202); // still pending
      await holder.query('COMMIT');
      await waitFor(async () => (await get(`${p.url()}${blocked.json.result_url}`, h)).status === 200, 15_000, 'the stuck command applied');
    } finally {
      await holder.query('ROLLBACK').catch(() => {});
      holder.release();
    }
  });
});
