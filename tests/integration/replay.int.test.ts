import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { SchemaRegistry } from '@ingest/contracts';
import { createDatabaseFromTemplate, createPool, dropDatabase, type Pool } from '@ingest/db';
import { createKafka } from '@ingest/kafka';
import { compareReadModels, replayCommandLog } from '@ingest/operator';
import { startPipeline, type TestPipeline } from '../support/pipeline.ts';
import { mixedWorkload } from '../support/workload.ts';

// D26 / D3: a rebuild from offset 0 of the command log into an empty database reproduces the
// live read model exactly, publishes nothing, and survives being stopped half way.
let p: TestPipeline;
const scratch: Array<{ name: string; url: string; pool: Pool }> = [];

async function scratchDb(): Promise<{ url: string; pool: Pool }> {
  const name = `ingest_test_replay_${randomUUID().slice(0, 8)}`;
  const url = await createDatabaseFromTemplate(inject('adminDatabaseUrl'), name, inject('templateDatabase'));
  const s = { name, url, pool: createPool({ connectionString: url, max: 4 }) };
  scratch.push(s);
  return s;
}

beforeAll(async () => {
  p = await startPipeline({ env: { DAILY_SNAPSHOT_CHECK_MS: '3600000' } });
  for (const shop of ['replay-a.example', 'replay-b.example', 'replay-c.example']) await mixedWorkload(p, shop);
  await p.stopProjector(); // the live read model is final; the relay has published what it will
});
afterAll(async () => {
  for (const s of scratch) {
    await s.pool.end();
    await dropDatabase(inject('adminDatabaseUrl'), s.name);
  }
  await p?.stop();
});

const replay = (pool: Pool, extra: Partial<Parameters<typeof replayCommandLog>[0]> = {}) =>
  replayCommandLog({
    pool,
    kafka: createKafka({ brokers: p.brokers, clientId: `test-${p.id}-replay` }),
    schemas: new SchemaRegistry(),
    topic: p.topics.commands,
    ...extra,
  });

describe('replay into a scratch database (D26)', () => {
  it('reproduces every table of the live read model exactly, ids included (D3)', async () => {
    const s = await scratchDb();
    const result = await replay(s.pool, { batchSize: 7 });
    expect(result.complete).toBe(true);
    expect(result.applied).toBeGreaterThan(30);
    const tables = await compareReadModels(p.databaseUrl, s.url);
    for (const t of tables) expect(t, t.table).toMatchObject({ identical: true, onlyLive: [], onlyScratch: [], different: [] });
    const rows = Object.fromEntries(tables.map((t) => [t.table, t.liveRows]));
    for (const table of [
      'public.products',
      'sot.inventory_levels',
      'sot.inventory_update_logs',
      'public.order_line_master',
      'public.order_line_master_update_logs',
      'sot.inventory_daily_snapshots',
    ])
      expect(rows[table], table).toBeGreaterThan(0);
  });

  it('publishes nothing and stores no replies: no outbox rows, no command results in the rebuild', async () => {
    const s = await scratchDb();
    const liveOutbox = (await p.db.query('SELECT count(*)::int AS n FROM agent_runtime.outbox')).rows[0].n;
    await replay(s.pool);
    const { rows } = await s.pool.query(
      'SELECT (SELECT count(*)::int FROM agent_runtime.outbox) AS outbox, (SELECT count(*)::int FROM agent_runtime.command_results) AS results',
    );
    expect(rows[0]).toEqual({ outbox: 0, results: 0 });
    expect((await p.db.query('SELECT count(*)::int AS n FROM agent_runtime.outbox')).rows[0].n).toBe(liveOutbox);
  });

  it('stopped half way and resumed, it still verifies identical, applying each command once', async () => {
    const s = await scratchDb();
    const stop = new AbortController();
    const first = await replay(s.pool, {
      batchSize: 2,
      progressEveryMs: 1,
      onProgress: (pr) => {
        if (pr.done >= pr.total / 2) stop.abort();
      },
      signal: stop.signal,
    });
    expect(first.complete).toBe(false);
    const second = await replay(s.pool, { batchSize: 2 });
    expect(second.complete).toBe(true);
    const total = (await p.db.query('SELECT count(*)::int AS n FROM agent_runtime.processed_commands')).rows[0].n;
    expect(first.applied + first.skipped + second.applied + second.skipped).toBe(total);
    for (const t of await compareReadModels(p.databaseUrl, s.url)) expect(t, t.table).toMatchObject({ identical: true });
  });

  it('REPLAY_BUSY_PERCENT: rests after each batch in proportion to its time, and still reproduces the read model (B10)', async () => {
    const s = await scratchDb();
    // Each replay transaction's BEGIN and COMMIT, on the test's clock.
    const txs: Array<{ begin: number; commit: number }> = [];
    const connect = s.pool.connect.bind(s.pool) as (...a: any[]) => any;
    const watched = new WeakSet<object>();
    const watch = (client: any) => {
      if (watched.has(client)) return client;
      watched.add(client);
      const query = client.query.bind(client);
      client.query = (...args: any[]) => {
        const text = typeof args[0] === 'string' ? args[0] : '';
        if (text === 'BEGIN') txs.push({ begin: performance.now(), commit: 0 });
        const out = query(...args);
        if (text === 'COMMIT') void out.then(() => (txs.at(-1)!.commit = performance.now()));
        return out;
      };
      return client;
    };
    (s.pool as any).connect = (cb?: (...a: any[]) => void) =>
      cb ? connect((err: unknown, client: any, done: unknown) => cb(err, client && watch(client), done)) : connect().then(watch);
    const result = await replay(s.pool, { batchSize: 7, concurrency: 1, busyPercent: 25 });
    expect(result.complete).toBe(true);
    expect(txs.length).toBeGreaterThan(3);
    // At 25 %, a batch that took t is followed by a rest of at least 3t before the next one begins.
    for (let i = 1; i < txs.length; i++) {
      const took = txs[i - 1]!.commit - txs[i - 1]!.begin;
      expect(txs[i]!.begin - txs[i - 1]!.commit, `rest after batch ${i}`).toBeGreaterThanOrEqual(0.9 * 3 * took);
    }
    for (const t of await compareReadModels(p.databaseUrl, s.url)) expect(t, t.table).toMatchObject({ identical: true });
  });

  it('verify lists the rows that differ', async () => {
    const s = await scratchDb();
    await replay(s.pool);
    await s.pool.query(`UPDATE public.products SET product_name = 'tampered' WHERE barcode = 'A' AND shop = 'replay-a.example'`);
    await s.pool.query(`DELETE FROM sot.channels WHERE shop = 'replay-b.example'`);
    const tables = await compareReadModels(p.databaseUrl, s.url);
    const products = tables.find((t) => t.table === 'public.products')!;
    expect(products.identical).toBe(false);
    expect(products.different).toHaveLength(1);
    expect(tables.find((t) => t.table === 'sot.channels')!.onlyLive).toHaveLength(1);
  });
});
