import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Pool } from '@ingest/db';
import { readArchive, withLockRetry, type Manifest } from './archivePartition.ts';

const q = (ident: string) => `"${ident.replaceAll('"', '""')}"`;
const qualified = (name: string) => name.split('.').map(q).join('.');

/**
 * Brings an archived month back (the way back of archivePartition): checks the file against its
 * manifest (SHA-256), loads it into a table of its own, counts it, and attaches it to its log, so
 * the reads see the month again. The table is built and filled before the attach, which takes the
 * same short locks as the upkeep's (logPartitions.ts).
 */
export async function restorePartition(
  pool: Pool,
  manifestPath: string,
  opts: { lockTimeoutMs?: number; attempts?: number } = {},
): Promise<{ partition: string; rows: number; attachMs: number }> {
  const manifest = JSON.parse(await readFile(manifestPath, 'utf8')) as Manifest;
  const path = join(dirname(manifestPath), manifest.file);
  const table = qualified(manifest.partition);
  const check = await readArchive(path);
  if (check.sha256 !== manifest.sha256 || check.rows !== manifest.rows) {
    throw new Error(`${path} is not the file its manifest describes (sha256 ${check.sha256}, ${check.rows} rows)`);
  }
  // Indexes first: the rows load slower, but the attach adopts them instead of building them under its locks.
  await pool.query(`CREATE TABLE ${table} (LIKE ${qualified(manifest.parent)} INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING INDEXES)`);
  try {
    await readArchive(path, async (lines) => {
      // The lines are passed as written (no JSON.parse in between): numbers and strings stay exact.
      await pool.query(`INSERT INTO ${table} SELECT * FROM jsonb_populate_recordset(NULL::${table}, $1::jsonb)`, [`[${lines.join(',')}]`]);
    });
    const { rows } = await pool.query<{ n: string }>(`SELECT count(*) AS n FROM ${table}`);
    if (Number(rows[0]?.n) !== manifest.rows) throw new Error(`loaded ${rows[0]?.n} rows of ${manifest.rows}`);
    const attached = await withLockRetry(
      pool,
      `ALTER TABLE ${qualified(manifest.parent)} ATTACH PARTITION ${table} FOR VALUES FROM ('${manifest.from}') TO ('${manifest.to}')`,
      opts,
    );
    return { partition: manifest.partition, rows: manifest.rows, attachMs: attached.ms };
  } catch (err) {
    await pool.query(`DROP TABLE IF EXISTS ${table}`).catch(() => {});
    throw err;
  }
}
