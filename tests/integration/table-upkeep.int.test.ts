import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { monthStart, partitionName, startTableUpkeep, UPKEEP_LOCK } from '@ingest/db';
import { INGEST_SECRET, post, startPipeline, waitFor, type TestPipeline } from '../support/pipeline.ts';

// Table upkeep (DB_UPKEEP): where PostgreSQL's autovacuum does not run (this machine's server runs
// with autovacuum = off), the tables were never analyzed and never vacuumed: the projector's
// set-based statements planned as nested loops over "empty" tables (a 1,000-line snapshot took
// 1.9 s instead of ~0.1 s) and dead rows were never reclaimed. The projector that prunes now does
// what autovacuum would, by its thresholds. `always` here: the test holds whatever the server runs.
let p: TestPipeline;
beforeAll(async () => {
  p = await startPipeline({ env: { DB_UPKEEP: 'always' } });
});
afterAll(async () => {
  await p.stop();
});

const stats = async (table: string) =>
  (
    await p.db.query<{ dead: number; analyzed: boolean; vacuumed: boolean; reltuples: number }>(
      `SELECT n_dead_tup::int AS dead, last_analyze IS NOT NULL AS analyzed, last_vacuum IS NOT NULL AS vacuumed, c.reltuples::float8 AS reltuples
         FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid WHERE s.schemaname || '.' || s.relname = $1`,
      [table],
    )
  ).rows[0]!;

describe('table upkeep where autovacuum does not run', () => {
  it('analyzes a table once written, vacuums its dead rows, then leaves it until it is due again; one process at a time', async () => {
    const shop = `upkeep-${randomUUID().slice(0, 6)}.example`;
    const products = (price: number) =>
      Array.from({ length: 1500 }, (_, i) => ({ barcode: `U${i}`, product_name: 'Kept', current_price: price }));
    const send = (price: number) =>
      post(`${p.url()}/api/ingest/products`, { shop, products: products(price) }, { 'x-ingest-secret': INGEST_SECRET });
    expect((await send(1)).json).toMatchObject({ created: 1500 });
    expect((await send(2)).json).toMatchObject({ updated: 1500 });
    // The statistics views see a backend's counts once it has reported them (at most a few seconds later).
    await waitFor(async () => (await stats('public.products')).dead >= 1500, 20_000, 'dead rows counted');

    const upkeep = p.projector!.upkeep!;
    // Another process holding the upkeep: this one does nothing.
    const other = await p.db.connect();
    try {
      await other.query('SELECT pg_advisory_lock($1)', [UPKEEP_LOCK]);
      expect(await upkeep.runOnce()).toEqual([]);
      await other.query('SELECT pg_advisory_unlock($1)', [UPKEEP_LOCK]);
    } finally {
      other.release();
    }

    const done = await upkeep.runOnce();
    expect(done).toContainEqual({ table: 'public.products', action: 'vacuum_analyze', ms: expect.any(Number) });
    // The log is partitioned by month: its rows, and so its upkeep, are the current month's partition's.
    expect(done).toContainEqual({
      table: partitionName('public.product_update_logs', monthStart(new Date())),
      action: expect.stringMatching(/vacuum_analyze|analyze/),
      ms: expect.any(Number),
    });
    const after = await stats('public.products');
    expect(after).toMatchObject({ dead: 0, analyzed: true, vacuumed: true, reltuples: 1500 });

    // Nothing new: nothing due for that table.
    expect((await upkeep.runOnce()).map((d) => d.table)).not.toContain('public.products');
    // Past its thresholds again, but within autovacuum_naptime (1 min) of its last VACUUM: it waits, as under autovacuum.
    expect((await send(3)).json).toMatchObject({ updated: 1500 });
    await waitFor(async () => (await stats('public.products')).dead >= 1500, 20_000, 'dead rows counted');
    expect((await upkeep.runOnce()).map((d) => d.table)).not.toContain('public.products');
    // What it did is counted per table and action, and the dead rows are exposed.
    const metrics = await p.projector!.registry.getSingleMetricAsString('table_upkeep_total');
    expect(metrics).toMatch(/table_upkeep_total\{table="public.products",action="vacuum_analyze"\} 1/);
  });
  it('yields, as autovacuum does, to a session that comes to wait for a lock on the table it vacuums', async () => {
    const shop = `yield-${randomUUID().slice(0, 6)}.example`;
    const send = (price: number) =>
      post(
        `${p.url()}/api/ingest/products`,
        { shop, products: Array.from({ length: 1500 }, (_, i) => ({ barcode: `Y${i}`, product_name: 'Yield', current_price: price })) },
        { 'x-ingest-secret': INGEST_SECRET },
      );
    expect((await send(1)).status).toBe(200);
    expect((await send(2)).status).toBe(200);
    await waitFor(async () => (await stats('public.products')).dead >= 1500, 20_000, 'dead rows counted');
    // A VACUUM slowed down to 100 ms per page (about 10 s for this table), so the test can come to wait on it.
    const yielded: object[] = [];
    const slow = startTableUpkeep({
      connectionString: p.databaseUrl,
      mode: 'always',
      intervalMs: 3_600_000,
      schemas: ['public'],
      // The pipeline's own upkeep analyzed the table a moment ago: no naptime to wait here.
      naptimeS: 0,
      throttle: { costDelayMs: 100, costLimit: 1 },
      log: { info: (obj, msg) => void (msg.includes('yielded') && yielded.push(obj)), warn: () => {} },
    });
    const round = slow.runOnce().catch(() => []);
    try {
      await waitFor(
        async () =>
          (
            await p.db.query(
              `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'ingest-upkeep'
                  AND state = 'active' AND query LIKE 'VACUUM%"products"'`,
            )
          ).rows.length > 0,
        20_000,
        'the slow VACUUM of products running',
      );
      const c = await p.db.connect();
      try {
        await c.query('BEGIN');
        await c.query('LOCK TABLE public.products IN ACCESS EXCLUSIVE MODE'); // what a migration or the rebuild's swap takes
        await c.query('ROLLBACK');
      } finally {
        c.release();
      }
      await waitFor(async () => yielded.length > 0, 5_000, 'the VACUUM yielded');
      expect(yielded[0]).toMatchObject({ table: 'public.products' });
    } finally {
      await slow.stop();
      await round;
    }
  });
});
