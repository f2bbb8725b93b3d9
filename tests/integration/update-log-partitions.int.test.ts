import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  createDatabaseFromTemplate,
  createPool,
  dropDatabase,
  ensureLogPartitions,
  MIGRATIONS_DIR,
  monthStart,
  partitionName,
  startTableUpkeep,
  type Pool,
} from '@ingest/db';
import { insertLogRows, LOG_TABLES, logDigest, rowsByPartition } from '../support/updateLogRows.ts';

// The update logs partitioned by month (migration 1764900000000_partitioned-update-logs, D24's audit
// history that is never pruned): the migration keeps the rows already there, the upkeep creates the
// coming months ahead (a month the default partition caught is moved into its own), and creating one
// never makes the projector's inserts wait, nor a reader longer than the lock_timeout.
const MIGRATION = '1764900000000_partitioned-update-logs';
const halves = (file: string) => readFileSync(join(MIGRATIONS_DIR, `${file}.sql`), 'utf8').split('-- Down Migration');

describe(`migration ${MIGRATION} with rows present`, () => {
  const name = `ingest_test_partmig_${randomUUID().slice(0, 8)}`;
  let client: pg.Client;
  beforeAll(async () => {
    const url = await createDatabaseFromTemplate(inject('adminDatabaseUrl'), name, 'template1');
    client = new pg.Client({ connectionString: url });
    await client.connect();
    // The migrations before it, as node-pg-migrate runs them (their up halves), on an empty database.
    await client.query('CREATE TABLE public.pgmigrations (id serial PRIMARY KEY, name text NOT NULL, run_on timestamp NOT NULL)');
    const earlier = readdirSync(MIGRATIONS_DIR)
      .filter((f) => f.endsWith('.sql') && f < MIGRATION)
      .sort();
    for (const f of earlier) await client.query(halves(f.slice(0, -4))[0]!);
  });
  afterAll(async () => {
    await client?.end();
    await dropDatabase(inject('adminDatabaseUrl'), name);
  });

  it('moves every row into the partition of its month, and back on the way down; views, grants and comments stay', async () => {
    // Rows from 14 months ago to 5 months ahead (beyond the months the migration creates: those go to the default).
    const now = new Date();
    const start = monthStart(now, -14).toISOString();
    await insertLogRows(client, { from: start, days: 19 * 30, n: 1900, tag: 'mig' });
    const before = await Promise.all(LOG_TABLES.map((t) => logDigest(client, t)));
    expect(before.map((d) => d.n)).toEqual([1900, 1900, 1900]);

    await client.query('BEGIN');
    await client.query(halves(MIGRATION)[0]!);
    await client.query('COMMIT');
    for (const [i, t] of LOG_TABLES.entries()) {
      expect(await logDigest(client, t)).toEqual(before[i]);
      const kind = await client.query(`SELECT relkind FROM pg_class WHERE oid = $1::regclass`, [t]);
      expect(kind.rows[0]).toEqual({ relkind: 'p' });
      const placed = await rowsByPartition(client, t);
      const bare = (p: string) => p.replace(/^.*\./, '');
      // Every month from the oldest row's to two after the current one has its partition; nothing earlier is in the default.
      for (let k = -14; k <= 2; k++) expect(Object.keys(placed).map(bare)).toContain(bare(partitionName(t, monthStart(now, k))));
      const inDefault = await client.query<{ n: number; oldest: Date | null }>(
        `SELECT count(*)::int AS n, min(created_at) AS oldest FROM ${t}_default`,
      );
      expect(inDefault.rows[0]!.n).toBeGreaterThan(0);
      expect(inDefault.rows[0]!.oldest!.getTime()).toBeGreaterThanOrEqual(monthStart(now, 3).getTime());
    }
    // The views read the new tables, keep their comments and their reader (D25).
    const view = await client.query(
      `SELECT count(*)::int AS n, has_table_privilege('agent_reader', 'agent_read.inventory_update_logs', 'SELECT') AS readable,
              col_description('agent_read.inventory_update_logs'::regclass, 1) AS comment FROM agent_read.inventory_update_logs`,
    );
    expect(view.rows[0]).toMatchObject({ n: 1900, readable: true, comment: expect.stringContaining('Record id') });
    const service = await client.query(`SELECT has_table_privilege('ingest_service', 'sot.inventory_update_logs', 'INSERT') AS ok`);
    expect(service.rows[0]).toEqual({ ok: true });

    await client.query('BEGIN');
    await client.query(halves(MIGRATION)[1]!);
    await client.query('COMMIT');
    for (const [i, t] of LOG_TABLES.entries()) {
      expect(await logDigest(client, t)).toEqual(before[i]);
      const kind = await client.query(`SELECT relkind FROM pg_class WHERE oid = $1::regclass`, [t]);
      expect(kind.rows[0]).toEqual({ relkind: 'r' });
    }
  });
});

describe('partitions ahead (the table upkeep)', () => {
  const name = `ingest_test_partup_${randomUUID().slice(0, 8)}`;
  let pool: Pool;
  beforeAll(async () => {
    const url = await createDatabaseFromTemplate(inject('adminDatabaseUrl'), name, inject('templateDatabase'));
    pool = createPool({ connectionString: url, max: 6 });
  });
  afterAll(async () => {
    await pool?.end();
    await dropDatabase(inject('adminDatabaseUrl'), name);
  });

  it('creates the current and next two months where missing, moving rows the default caught into their month', async () => {
    const now = new Date('2031-03-10T00:00:00Z');
    await insertLogRows(pool, { from: '2031-03-15T00:00:00Z', days: 1, n: 20, tag: 'caught' });
    const c = await pool.connect();
    try {
      const made = await ensureLogPartitions(c, { now });
      expect(made.map((m) => m.partition).sort()).toEqual(
        LOG_TABLES.flatMap((t) => ['203103', '203104', '203105'].map((m) => `${t}_p${m}`)).sort(),
      );
      expect(made.filter((m) => m.moved > 0).map((m) => m.moved)).toEqual([20, 20, 20]);
      expect(await ensureLogPartitions(c, { now })).toEqual([]); // all there: nothing to do
    } finally {
      c.release();
    }
    for (const t of LOG_TABLES) {
      const placed = await rowsByPartition(pool, t);
      expect(Object.entries(placed).map(([p, n]) => [p.replace(/^.*\./, ''), n])).toEqual([[`${t.replace(/^.*\./, '')}_p203103`, 20]]);
    }
  });

  it('runs in every DB_UPKEEP mode, off included (partitions are not autovacuum work)', async () => {
    const next = partitionName('public.product_update_logs', monthStart(new Date(), 2));
    await pool.query(`DROP TABLE ${next}`);
    const upkeep = startTableUpkeep({
      connectionString: pool.options.connectionString!,
      mode: 'off',
      intervalMs: 3_600_000,
      log: { info: () => {}, warn: () => {} },
    });
    try {
      expect(await upkeep.runOnce()).toEqual([{ table: next, action: 'create_partition', ms: expect.any(Number) }]);
    } finally {
      await upkeep.stop();
    }
  });

  it('gives up after lock_timeout while a reader holds the default partition; inserts never wait; the next round makes it', async () => {
    const now = new Date('2032-07-01T00:00:00Z');
    // A reader of the whole log in an open transaction: it holds ACCESS SHARE on every partition, the default too.
    const reader = await pool.connect();
    const upkeep = await pool.connect();
    try {
      await reader.query('BEGIN');
      await reader.query(`SELECT count(*) FROM sot.inventory_update_logs WHERE command_id = $1`, [randomUUID()]);
      const pid = (await upkeep.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
      const started = performance.now();
      const attempt = ensureLogPartitions(upkeep, { now, lockTimeoutMs: 1500, parents: ['sot.inventory_update_logs'] }).catch(
        (e: unknown) => e,
      );
      const waiting = async () =>
        (await pool.query(`SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND wait_event_type = 'Lock'`, [pid])).rows.length > 0;
      while (!(await waiting())) await new Promise((resolve) => setTimeout(resolve, 5));
      // While the attach waits, the projector's insert of this month goes through (ATTACH holds only
      // SHARE UPDATE EXCLUSIVE on the parent, and the insert does not touch the default)…
      const t0 = performance.now();
      await insertLogRows(pool, { from: new Date().toISOString(), days: 0.001, n: 10, tag: `busy-${randomUUID()}` });
      const insertMs = performance.now() - t0;
      // …and a reader of the whole log that arrives behind it waits, but no longer than its lock_timeout.
      const t1 = performance.now();
      await pool.query(`SELECT count(*) FROM sot.inventory_update_logs WHERE command_id = $1`, [randomUUID()]);
      const readMs = performance.now() - t1;
      expect(await attempt).toMatchObject({ code: '55P03' });
      const gaveUpMs = performance.now() - started;
      const took = JSON.stringify({ insertMs, readMs, gaveUpMs });
      expect(insertMs, took).toBeLessThan(500);
      expect(readMs, took).toBeLessThan(1500 + 1000);
      expect(gaveUpMs, took).toBeLessThan(1500 + 1000);
      await reader.query('ROLLBACK');
      expect((await ensureLogPartitions(upkeep, { now, lockTimeoutMs: 1500, parents: ['sot.inventory_update_logs'] })).length).toBe(3);
    } finally {
      await reader.query('ROLLBACK').catch(() => {});
      reader.release();
      upkeep.release();
    }
  });
});
