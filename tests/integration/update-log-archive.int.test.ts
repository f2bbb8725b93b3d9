import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createDatabaseFromTemplate, createPool, dropDatabase, ensureLogPartitions, listLogPartitions, type Pool } from '@ingest/db';
import { archivePartition, partitionsTool, restorePartition, type Manifest } from '@ingest/operator';
import { insertLogRows, LOG_TABLES, logDigest } from '../support/updateLogRows.ts';

// The archival path of the update logs (docs/operations.md "Archiving a month"): a past month is
// detached, exported, read back, dropped; the months left are untouched and every documented read
// still answers; the file brings the month back row for row.
const name = `ingest_test_archive_${randomUUID().slice(0, 8)}`;
let pool: Pool;
let url: string;
let dir: string;
const JAN = ['2026-01-01T00:00:00Z', '2026-02-01T00:00:00Z'] as const;

beforeAll(async () => {
  url = await createDatabaseFromTemplate(inject('adminDatabaseUrl'), name, inject('templateDatabase'));
  pool = createPool({ connectionString: url, max: 4 });
  dir = await mkdtemp(join(tmpdir(), 'ingest-archive-'));
  // January and February 2026 get their partitions as the upkeep made them then; March and later
  // (up to the migration's months) fall in the default.
  const c = await pool.connect();
  await ensureLogPartitions(c, { now: new Date(JAN[0]), ahead: 1 }).finally(() => c.release());
  await insertLogRows(pool, { from: JAN[0], days: 59, n: 600, tag: 'jan-feb' });
  // This month's rows: `partitions ensure` (below) makes this month's partition and moves them out of
  // the default. A fixed month passed here only while it was the current one.
  const now = new Date();
  const thisMonth = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString();
  await insertLogRows(pool, { from: thisMonth, days: 20, n: 300, tag: 'this-month' });
});
afterAll(async () => {
  await pool?.end();
  await dropDatabase(inject('adminDatabaseUrl'), name);
  await rm(dir, { recursive: true, force: true });
});

describe('archiving a month of the update logs', () => {
  const before = new Map<string, { n: number; md5: string }>();
  const kept = new Map<string, { n: number; md5: string }>();

  it('detaches, exports, reads back and drops January of each log; the rest stays as it was', async () => {
    for (const t of LOG_TABLES) {
      before.set(t, await logDigest(pool, t));
      kept.set(t, await logDigest(pool, t, JAN[1]));
    }
    for (const t of LOG_TABLES) {
      const jan = await logDigest(pool, t, ...JAN);
      expect(jan.n).toBeGreaterThan(250);
      const m = await archivePartition(pool, { partition: `${t}_p202601`, dir });
      expect(m).toMatchObject({ parent: t, partition: `${t}_p202601`, from: JAN[0].replace('Z', '.000Z'), rows: jan.n });
      expect(m.detachMs).toEqual(expect.any(Number));
      const manifest = JSON.parse(await readFile(join(dir, `${m.file}.manifest.json`), 'utf8')) as Manifest;
      expect(manifest).toMatchObject({ rows: jan.n, sha256: m.sha256 });
      // One JSON object per row, every column.
      const lines = gunzipSync(await readFile(join(dir, m.file)))
        .toString('utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(lines).toHaveLength(jan.n);
      expect(Object.keys(lines[0]!)).toEqual(expect.arrayContaining(['log_id', 'shop', 'command_id', 'log_seq', 'created_at', 'actor']));
      // Gone from the log and from the database; the months after it are the same rows as before.
      expect(await logDigest(pool, t, ...JAN)).toEqual({ n: 0, md5: '' });
      expect((await pool.query('SELECT to_regclass($1) AS t', [`${t}_p202601`])).rows[0]).toEqual({ t: null });
      expect(await logDigest(pool, t, JAN[1])).toEqual(kept.get(t));
    }
    expect((await listLogPartitions(pool)).map((p) => p.partition)).not.toContain('sot.inventory_update_logs_p202601');
  });

  it('the documented reads still answer, from the months left (as agent_reader, through the views)', async () => {
    const c = await pool.connect();
    try {
      await c.query('BEGIN');
      await c.query('SET LOCAL ROLE agent_reader');
      const history = await c.query<{ created_at: Date }>(
        `SELECT created_at FROM agent_read.inventory_update_logs WHERE shop = $1 AND barcode = $2 ORDER BY created_at, log_seq`,
        ['shop-0', 'B50'],
      );
      expect(history.rows.length).toBeGreaterThan(0);
      expect(history.rows.every((r) => r.created_at >= new Date(JAN[1]))).toBe(true);
      const window = await c.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM agent_read.product_update_logs WHERE shop = $1 AND created_at >= $2 AND created_at < $3`,
        ['shop-1', '2026-02-01T00:00:00Z', '2026-03-01T00:00:00Z'],
      );
      expect(window.rows[0]!.n).toBeGreaterThan(0);
      const empty = await c.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM agent_read.order_line_master_update_logs WHERE shop = $1 AND created_at >= $2 AND created_at < $3`,
        ['shop-1', ...JAN],
      );
      expect(empty.rows[0]!.n).toBe(0);
    } finally {
      await c.query('ROLLBACK');
      c.release();
    }
  });

  it('restores a month from its file, row for row', async () => {
    for (const t of LOG_TABLES) {
      const r = await restorePartition(pool, join(dir, `${t}_p202601.ndjson.gz.manifest.json`));
      expect(r.partition).toBe(`${t}_p202601`);
      expect(await logDigest(pool, t)).toEqual(before.get(t));
    }
  });

  it('refuses the current month, a later one, the default partition and a table that is not a log month', async () => {
    const now = new Date();
    const current = `sot.inventory_update_logs_p${now.getUTCFullYear()}${String(now.getUTCMonth() + 1).padStart(2, '0')}`;
    await expect(archivePartition(pool, { partition: current, dir })).rejects.toThrow(/current month or a later one/);
    await expect(archivePartition(pool, { partition: 'sot.inventory_update_logs_p209901', dir })).rejects.toThrow(/current month/);
    await expect(archivePartition(pool, { partition: 'sot.inventory_update_logs_default', dir })).rejects.toThrow(
      /not a month's partition/,
    );
    await expect(archivePartition(pool, { partition: 'sot.inventory_levels_p202601', dir })).rejects.toThrow(/not a month's partition/);
    expect(await logDigest(pool, 'sot.inventory_update_logs')).toEqual(before.get('sot.inventory_update_logs'));
  });

  it('the operator command lists the partitions and archives one (npm run partitions)', async () => {
    const printed: string[] = [];
    const out = { print: (l: string) => printed.push(l), error: (l: string) => printed.push(`error: ${l}`), usage: 'usage' };
    const env = { ...process.env, DATABASE_URL: url };
    expect(await partitionsTool(['list'], env, out)).toBe(0);
    expect(printed.join('\n')).toMatch(
      /public\.order_line_master_update_logs_p202602 {2}2026-02-01T00:00:00\.000Z \.\. 2026-03-01T00:00:00\.000Z/,
    );
    expect(printed.join('\n')).toMatch(/sot\.inventory_update_logs_default {2}DEFAULT/);
    printed.length = 0;
    expect(await partitionsTool(['archive', 'public.product_update_logs_p202602', '--to', dir], env, out)).toBe(0);
    expect(printed[0]).toMatch(/^archived \d+ rows of public\.product_update_logs_p202602/);
    expect(await partitionsTool(['archive'], env, out)).toBe(2);
    // A month the default caught (a replay of archived commands): made again, its rows move out of the default.
    await insertLogRows(pool, { from: '2025-05-03T00:00:00Z', days: 1, n: 7, tag: 'may' });
    printed.length = 0;
    expect(await partitionsTool(['ensure', '--month', '2025-05'], env, out)).toBe(0);
    expect(printed.join('\n')).toContain('created sot.inventory_update_logs_p202505 (7 rows moved from the default)');
    expect((await pool.query(`SELECT count(*)::int AS n FROM sot.inventory_update_logs_default`)).rows[0]).toEqual({ n: 0 });
  });
});
