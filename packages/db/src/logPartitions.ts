import type pg from 'pg';

/**
 * The update logs' monthly partitions (migration 1764900000000_partitioned-update-logs): their names
 * and bounds, what is attached, and the creation of the coming months' partitions that the table
 * upkeep runs. Months are calendar months in UTC, `<table>_pYYYYMM`; `<table>_default` catches the rest.
 */

type Queryable = Pick<pg.ClientBase, 'query'>;

/** The three logs the spec keeps (never pruned): partitioned by month on created_at. */
export const UPDATE_LOG_TABLES = [
  'public.product_update_logs',
  'sot.inventory_update_logs',
  'public.order_line_master_update_logs',
] as const;

/** Months ahead of the current one that always have their partition (so the default stays empty). */
export const PARTITIONS_AHEAD = 2;

/**
 * How long attaching (or detaching) a month may wait for its locks. Readers of the whole log queue
 * behind the waiting attach, so the wait is kept short; with months made two ahead, giving up until
 * the next round costs nothing (bench/partition-pause.ts: readers waited seconds behind a 1 s one on
 * the loaded test machine).
 */
export const LOCK_TIMEOUT_MS = 250;

export interface LogPartition {
  /** schema.name of the partition. */
  partition: string;
  /** schema.name of the partitioned table. */
  parent: string;
  /** Its bounds (UTC instants); null for the default partition. */
  from: Date | null;
  to: Date | null;
}

const q = (ident: string) => `"${ident.replaceAll('"', '""')}"`;
const qualified = (name: string) => name.split('.').map(q).join('.');

/** The first instant of the UTC month `monthsLater` months after the one `at` falls in. */
export function monthStart(at: Date, monthsLater = 0): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + monthsLater, 1));
}

/** `public.product_update_logs`, 2026-11 → `public.product_update_logs_p202611`. */
export function partitionName(parent: string, month: Date): string {
  return `${parent}_p${month.getUTCFullYear()}${String(month.getUTCMonth() + 1).padStart(2, '0')}`;
}

/** Every partition of the partitioned tables named, with its bounds, by parent then start. */
export async function listLogPartitions(db: Queryable, parents: readonly string[] = UPDATE_LOG_TABLES): Promise<LogPartition[]> {
  // The bounds as PostgreSQL prints them, FROM ('…') TO ('…') or DEFAULT: read back as instants.
  const { rows } = await db.query<{ partition: string; parent: string; bound: string }>(
    `SELECT cn.nspname || '.' || c.relname AS partition, pn.nspname || '.' || p.relname AS parent,
            pg_get_expr(c.relpartbound, c.oid) AS bound
       FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_namespace cn ON cn.oid = c.relnamespace
       JOIN pg_class p ON p.oid = i.inhparent JOIN pg_namespace pn ON pn.oid = p.relnamespace
      WHERE p.relkind = 'p' AND pn.nspname || '.' || p.relname = ANY($1::text[])`,
    [parents],
  );
  const out = rows.map((r): LogPartition => {
    const m = /FROM \('([^']+)'\) TO \('([^']+)'\)/.exec(r.bound);
    return { partition: r.partition, parent: r.parent, from: m ? new Date(m[1]!) : null, to: m ? new Date(m[2]!) : null };
  });
  return out.sort((a, b) => a.parent.localeCompare(b.parent) || (a.from?.getTime() ?? Infinity) - (b.from?.getTime() ?? Infinity));
}

export interface EnsureOptions {
  now?: Date;
  ahead?: number;
  /** How long the attach may wait for its locks before it gives up until the next round (ms). */
  lockTimeoutMs?: number;
  /** Partitioned tables to look after (default: the three logs; the upkeep adds the in-place rebuild's twins). */
  parents?: readonly string[];
}

export interface PartitionCreated {
  partition: string;
  /** Rows moved out of the default partition into it (0 unless the default had caught rows of that month). */
  moved: number;
  ms: number;
}

/**
 * Creates the partitions of the current month and the next `ahead` ones where missing. Each is made
 * as a table of its own and then attached, in one transaction under `lock_timeout`: ATTACH PARTITION
 * takes SHARE UPDATE EXCLUSIVE on the parent, which the projector's inserts and the readers do not
 * conflict with (CREATE TABLE … PARTITION OF would take ACCESS EXCLUSIVE on the parent and stop
 * them), and ACCESS EXCLUSIVE on the default partition, to prove it holds no row of the new month.
 * Plans that read the whole parent lock the default too, so they wait for that moment; with a short
 * lock_timeout the attach gives up instead of queueing in front of them for long (55P03), and the
 * next round tries again. Rows of the month the default caught meanwhile are moved into the new
 * partition in the same transaction.
 */
export async function ensureLogPartitions(db: Queryable, opts: EnsureOptions = {}): Promise<PartitionCreated[]> {
  const now = opts.now ?? new Date();
  const ahead = opts.ahead ?? PARTITIONS_AHEAD;
  const parents = opts.parents ?? UPDATE_LOG_TABLES;
  const existing = await listLogPartitions(db, parents);
  const created: PartitionCreated[] = [];
  for (const parent of parents) {
    const mine = existing.filter((p) => p.parent === parent);
    if (mine.length === 0) continue; // not partitioned (an older schema): nothing to do
    const fallback = mine.find((p) => p.from === null);
    for (let k = 0; k <= ahead; k++) {
      const from = monthStart(now, k);
      const to = monthStart(now, k + 1);
      if (mine.some((p) => p.from !== null && p.to !== null && p.from < to && p.to > from)) continue;
      created.push(await attachMonth(db, parent, from, to, fallback?.partition ?? null, opts.lockTimeoutMs ?? LOCK_TIMEOUT_MS));
    }
  }
  return created;
}

async function attachMonth(db: Queryable, parent: string, from: Date, to: Date, fallback: string | null, lockTimeoutMs: number) {
  const started = performance.now();
  const partition = partitionName(parent, from);
  const bounds = `FOR VALUES FROM ('${from.toISOString()}') TO ('${to.toISOString()}')`;
  await db.query('BEGIN');
  try {
    await db.query(`SET LOCAL lock_timeout = ${Math.max(1, Math.trunc(lockTimeoutMs))}`);
    // With the log's indexes built now, on the empty table, before any lock on the log: the attach
    // then adopts them instead of building them while it holds the default partition.
    await db.query(
      `CREATE TABLE ${qualified(partition)} (LIKE ${qualified(parent)} INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING INDEXES)`,
    );
    let moved = 0;
    if (fallback) {
      // Normally none: the month is created before it starts. One the default caught moves here first.
      const inRange = `created_at >= '${from.toISOString()}' AND created_at < '${to.toISOString()}'`;
      const r = await db.query(
        `WITH gone AS (DELETE FROM ${qualified(fallback)} WHERE ${inRange} RETURNING *) INSERT INTO ${qualified(partition)} SELECT * FROM gone`,
      );
      moved = r.rowCount ?? 0;
    }
    await db.query(`ALTER TABLE ${qualified(parent)} ATTACH PARTITION ${qualified(partition)} ${bounds}`);
    await db.query('COMMIT');
    return { partition, moved, ms: Math.round(performance.now() - started) };
  } catch (err) {
    await db.query('ROLLBACK').catch(() => {});
    throw err;
  }
}
