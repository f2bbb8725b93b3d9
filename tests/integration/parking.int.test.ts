import { randomUUID } from 'node:crypto';
import { Partitioners } from 'kafkajs';
import { v7 as uuidv7 } from 'uuid';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { SchemaRegistry } from '@ingest/contracts';
import { createDatabaseFromTemplate, createPool, dropDatabase, type Pool } from '@ingest/db';
import { createCommandLog, createKafka, createMessageSink, type MessageSink } from '@ingest/kafka';
import { compareReadModels, replayCommandLog } from '@ingest/operator';
import { listParked, retryParked, skipParked, type ParkedDeps } from '@ingest/projection';
import { documentedAnswers } from '../support/openapi.ts';
import { appendPoison as appendPoisonTo } from '../support/poison.ts';
import { INGEST_SECRET, get, post, startPipeline, type TestPipeline } from '../support/pipeline.ts';

// Poison isolation per shop (docs/operations.md#parked-commands): a command that fails for a
// reason retrying cannot fix is parked after bounded tries; its shop's later commands park behind
// it (D2) while the other shops of the same partition keep flowing; an operator skips or retries.
let p: TestPipeline;
let sink: MessageSink;

beforeAll(async () => {
  // No daily job: its commands would land in the log between a replay and its comparison.
  p = await startPipeline({ env: { PROJECTOR_RETRY_BACKOFF: '10ms', DAILY_SNAPSHOT_CHECK_MS: '3600000' } });
  sink = await createMessageSink(createKafka({ brokers: p.brokers, clientId: `test-${p.id}-poison` }));
});
afterAll(async () => {
  await sink.close();
  await p.stop();
});

const ING = { 'x-ingest-secret': INGEST_SECRET };
const deps = (): ParkedDeps => ({ pool: p.db, schemas: new SchemaRegistry(), topics: p.topics });
const BY = { actor: 'cli:test', reason: 'the test resolves it' };
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

/**
 * Replays the whole log into a fresh database and hands it to `check`. Parked commands are read from
 * the live database, or with `parkedFromScratch` from the scratch one itself (which has none).
 */
async function replayInto<T>(check: (pool: Pool, url: string) => Promise<T>, parkedFromScratch = false): Promise<T> {
  const name = `ingest_test_replay_${randomUUID().slice(0, 8)}`;
  const url = await createDatabaseFromTemplate(inject('adminDatabaseUrl'), name, inject('templateDatabase'));
  const pool = createPool({ connectionString: url, max: 4 });
  try {
    const result = await replayCommandLog({
      pool,
      parkedFrom: parkedFromScratch ? pool : p.db,
      kafka: createKafka({ brokers: p.brokers, clientId: `test-${p.id}-replay-${randomUUID().slice(0, 6)}` }),
      schemas: new SchemaRegistry(),
      topic: p.topics.commands,
    });
    expect(result.complete).toBe(true);
    return await check(pool, url);
  } finally {
    await pool.end();
    await dropDatabase(inject('adminDatabaseUrl'), name);
  }
}

/** Replays the whole log into a fresh database, reading parked commands from the live one, and compares the read models. */
const replayDiffers = (): Promise<string[]> =>
  replayInto(async (_pool, url) =>
    (await compareReadModels(p.databaseUrl, url))
      .filter((t) => !t.identical)
      .map((t) => `${t.table}: only live ${t.onlyLive.length}, only replay ${t.onlyScratch.length}, different ${t.different.length}`),
  );

const appendPoison = (shop: string): Promise<string> => appendPoisonTo(sink, p.topics.commands, shop);

describe('parking', () => {
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
    // Both parked answers are what the served OpenAPI document says.
    const documented = await documentedAnswers(p.url());
    expect(documented('post', '/api/ingest/products', behind)).toBeNull();
    expect(documented('get', '/api/commands/{id}', poison)).toBeNull();
    expect((await listParked(p.db)).map((r) => r.command_id)).toEqual([poisonId, behindId]);

    // Retrying the poison fails again: it stays parked, and so does the command behind it.
    const retried = await retryParked(deps(), poisonId, BY);
    expect(retried).toMatchObject({ applied: [], failed: { command_id: poisonId }, remaining: 2 });
    expect((await status(behindId)).json.status).toBe('parked');

    // Held: the command behind it stays parked until it is retried (a skip without hold resumes it).
    expect(await skipParked(deps(), poisonId, { ...BY, hold: true })).toMatchObject({ applied: [], failed: null, remaining: 1 });
    const skipped = await status(poisonId);
    expect(skipped.status).toBe(422);
    expect(skipped.json).toMatchObject({ ok: false, error_kind: 'skipped' });

    expect(await retryParked(deps(), behindId, BY)).toMatchObject({ applied: [behindId], failed: null, remaining: 0 });
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

  it('a replay passes over what the live projector did not apply: commands still parked, and commands an operator skipped (D26)', async () => {
    const shop = `replay-parked-${randomUUID().slice(0, 6)}.example`;
    expect((await products(shop, ['R1'])).status).toBe(200);
    const poisonId = await appendPoison(shop);
    // Valid on its own: parked only because it waits behind the poison, so a replay could apply it.
    const behind = await products(shop, ['R2']);
    expect(behind.json).toMatchObject({ status: 'parked', waiting_behind: poisonId });
    const behindId = behind.json.command_id as string;
    expect(await replayDiffers()).toEqual([]);

    // The operator skips both: the live read model never gets R2, and neither may the replay.
    await skipParked(deps(), poisonId, { ...BY, hold: true });
    await skipParked(deps(), behindId, BY);
    expect((await products(shop, ['R3'])).json).toMatchObject({ ok: true, created: 1 });
    expect(await replayDiffers()).toEqual([]);
    const { rows } = await p.db.query(`SELECT barcode FROM public.products WHERE shop = $1 ORDER BY 1`, [shop]);
    expect(rows.map((r: { barcode: string }) => r.barcode)).toEqual(['R1', 'R3']);
  });

  it('a replay passes over a command that fails for a reason that does not change, alone: the rest of its batch is applied', async () => {
    const shop = `replay-poison-${randomUUID().slice(0, 6)}.example`;
    const neighbour = neighbourOf(shop);
    const poisonId = await appendPoison(shop);
    expect((await products(neighbour, ['N1'])).status).toBe(200);
    // Parked commands read from the scratch database itself, which has none: the poison is not
    // passed over up front, its batch fails, and runs again with one savepoint per command.
    await replayInto(async (pool) => {
      const kept = await pool.query('SELECT barcode FROM public.products WHERE shop = $1', [neighbour]);
      expect(kept.rows).toEqual([{ barcode: 'N1' }]);
      const claimed = await pool.query('SELECT 1 FROM agent_runtime.processed_commands WHERE command_id = $1', [poisonId]);
      expect(claimed.rowCount).toBe(1);
    }, true);
  });
});
