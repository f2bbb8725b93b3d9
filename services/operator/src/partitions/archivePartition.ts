import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rename, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createGunzip, createGzip } from 'node:zlib';
import { createInterface } from 'node:readline';
import { listLogPartitions, LOCK_TIMEOUT_MS, monthStart, UPDATE_LOG_TABLES, type Pool, type PoolClient } from '@ingest/db';

/**
 * The archival path of the update logs (docs/operations.md "Archiving a month"): a past month's
 * partition is detached, written to a gzipped file of one JSON object per row (row_to_json, read
 * back exactly by jsonb_populate_record) with a manifest (bounds, row count, SHA-256), read back
 * and counted, and only then dropped. Each step can be run again after a failure: a partition
 * detached but not yet dropped is exported again from the start.
 */

export interface ArchiveOptions {
  /** schema.name of a month's partition, e.g. sot.inventory_update_logs_p202601. */
  partition: string;
  dir: string;
  now?: Date;
  /** Keep the detached table after the export (the operator drops it later). */
  keepTable?: boolean;
  lockTimeoutMs?: number;
  attempts?: number;
}

export interface Manifest {
  parent: string;
  partition: string;
  from: string;
  to: string;
  rows: number;
  bytes: number;
  sha256: string;
  file: string;
  archived_at: string;
}

const q = (ident: string) => `"${ident.replaceAll('"', '""')}"`;
const qualified = (name: string) => name.split('.').map(q).join('.');
const PAGE = 5000;

/** `sot.inventory_update_logs_p202601` → its parent and month, or null when it is not a month of an update log. */
export function monthOf(partition: string): { parent: string; from: Date; to: Date } | null {
  const m = /^(.+)_p(\d{4})(\d{2})$/.exec(partition);
  if (!m || !(UPDATE_LOG_TABLES as readonly string[]).includes(m[1]!)) return null;
  const from = new Date(Date.UTC(Number(m[2]), Number(m[3]) - 1, 1));
  return Number(m[3]) >= 1 && Number(m[3]) <= 12 ? { parent: m[1]!, from, to: monthStart(from, 1) } : null;
}

/** Runs `sql` with a short lock_timeout, again after a pause while the locks are busy (55P03). */
export async function withLockRetry(
  pool: Pool,
  sql: string,
  opts: { lockTimeoutMs?: number; attempts?: number } = {},
): Promise<{ ms: number; attempts: number }> {
  const attempts = opts.attempts ?? 20;
  for (let i = 1; ; i++) {
    const c = await pool.connect();
    const started = performance.now();
    try {
      await c.query('BEGIN');
      await c.query(`SET LOCAL lock_timeout = ${Math.max(1, Math.trunc(opts.lockTimeoutMs ?? LOCK_TIMEOUT_MS))}`);
      await c.query(sql);
      await c.query('COMMIT');
      return { ms: Math.round(performance.now() - started), attempts: i };
    } catch (err) {
      await c.query('ROLLBACK').catch(() => {});
      if ((err as { code?: string }).code !== '55P03' || i >= attempts) throw err;
    } finally {
      c.release();
    }
    await new Promise((resolve) => setTimeout(resolve, Math.min(5000, 100 * 2 ** i)));
  }
}

export async function archivePartition(pool: Pool, opts: ArchiveOptions): Promise<Manifest & { detachMs: number | null }> {
  const month = monthOf(opts.partition);
  if (!month)
    throw new Error(`${opts.partition} is not a month's partition of an update log (<table>_pYYYYMM of ${UPDATE_LOG_TABLES.join(', ')})`);
  // The current month is still written, and the coming ones would be made again by the upkeep.
  if (month.to > monthStart(opts.now ?? new Date()))
    throw new Error(`${opts.partition} is the current month or a later one: only past months are archived`);
  const attached = (await listLogPartitions(pool, [month.parent])).some((p) => p.partition === opts.partition);
  const exists =
    (await pool.query<{ ok: boolean }>('SELECT to_regclass($1) IS NOT NULL AS ok', [qualified(opts.partition)])).rows[0]?.ok === true;
  if (!exists) throw new Error(`${opts.partition} does not exist (archived already?)`);
  // Not CONCURRENTLY: PostgreSQL refuses DETACH … CONCURRENTLY on a table with a default partition.
  // The plain detach changes only the catalog; it waits at most lockTimeoutMs at a time, and retries.
  const detached = attached
    ? await withLockRetry(pool, `ALTER TABLE ${qualified(month.parent)} DETACH PARTITION ${qualified(opts.partition)}`, opts)
    : null;
  await mkdir(opts.dir, { recursive: true });
  const file = `${opts.partition}.ndjson.gz`;
  const path = join(opts.dir, file);
  const c = await pool.connect();
  let rows = 0;
  try {
    await c.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    rows = await exportRows(c, opts.partition, `${path}.partial`);
    const counted = (await c.query<{ n: string }>(`SELECT count(*) AS n FROM ${qualified(opts.partition)}`)).rows[0]?.n;
    await c.query('COMMIT');
    if (Number(counted) !== rows) throw new Error(`exported ${rows} rows of ${opts.partition}, which holds ${counted}`);
  } finally {
    c.release();
  }
  await rename(`${path}.partial`, path);
  const check = await readArchive(path);
  if (check.rows !== rows) throw new Error(`${path} reads back ${check.rows} rows, ${rows} written`);
  const manifest: Manifest = {
    parent: month.parent,
    partition: opts.partition,
    from: month.from.toISOString(),
    to: month.to.toISOString(),
    rows,
    bytes: (await stat(path)).size,
    sha256: check.sha256,
    file,
    archived_at: new Date().toISOString(),
  };
  await writeFile(`${path}.manifest.json`, `${JSON.stringify(manifest, null, 2)}\n`, { flush: true });
  if (!opts.keepTable) await pool.query(`DROP TABLE ${qualified(opts.partition)}`);
  return { ...manifest, detachMs: detached?.ms ?? null };
}

/** Every row, one JSON object a line, in primary-key order (command_id, log_seq: the partition's own index), a page at a time. */
async function exportRows(c: PoolClient, table: string, path: string): Promise<number> {
  const gzip = createGzip();
  const out = createWriteStream(path, { flush: true });
  gzip.pipe(out);
  let rows = 0;
  let after: { command_id: string; log_seq: number; created_at: string } | null = null;
  for (;;) {
    const page: { rows: Array<{ line: string; command_id: string; log_seq: number; created_at: string }> } = await c.query(
      `SELECT row_to_json(t)::text AS line, command_id::text, log_seq, created_at::text FROM ${qualified(table)} t
        WHERE $1::uuid IS NULL OR (command_id, log_seq, created_at) > ($1::uuid, $2::int, $3::timestamptz)
        ORDER BY command_id, log_seq, created_at LIMIT ${PAGE}`,
      [after?.command_id ?? null, after?.log_seq ?? null, after?.created_at ?? null],
    );
    for (const r of page.rows) if (!gzip.write(`${r.line}\n`)) await once(gzip, 'drain');
    rows += page.rows.length;
    if (page.rows.length < PAGE) break;
    after = page.rows[page.rows.length - 1]!;
  }
  gzip.end();
  await once(out, 'close');
  return rows;
}

/** The archive's lines (each a row as JSON text), its row count and the SHA-256 of the file. */
export async function readArchive(path: string, onLines?: (lines: string[]) => Promise<void>): Promise<{ rows: number; sha256: string }> {
  const hash = createHash('sha256');
  const raw = createReadStream(path);
  raw.on('data', (chunk) => hash.update(chunk));
  const lines = createInterface({ input: raw.pipe(createGunzip()), crlfDelay: Infinity });
  let rows = 0;
  let batch: string[] = [];
  for await (const line of lines) {
    if (line === '') continue;
    rows++;
    batch.push(line);
    if (onLines && batch.length >= PAGE) {
      await onLines(batch);
      batch = [];
    }
  }
  if (onLines && batch.length > 0) await onLines(batch);
  return { rows, sha256: hash.digest('hex') };
}
