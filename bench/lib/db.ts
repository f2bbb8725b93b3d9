import { createDatabaseFromTemplate, createPool, dropDatabase, migrate, withDatabase, type Pool, type PoolClient } from '@ingest/db';
import { DEFAULT_DATABASE_URL } from '@ingest/runtime';

/** The server the bench runs on (DATABASE_URL or the default); every database it makes is ingest_bench_*. */
export const ADMIN_URL = withDatabase(process.env['DATABASE_URL'] ?? DEFAULT_DATABASE_URL, 'postgres');
/**
 * A run's databases carry its process id (`ingest_bench_b4` is made as `ingest_bench_p<pid>_b4`):
 * several checkouts on one machine share one PostgreSQL, and a run must never drop the databases of
 * another run still going (it did: a B7 run dropped a B6 run's databases under it).
 */
const scoped = (name: string): string => name.replace(/^ingest_bench_/, `ingest_bench_p${process.pid}_`);
export const TEMPLATE_DB = scoped('ingest_bench_template');
const made = new Set<string>();

/** A migrated template every bench database is copied from (CREATE DATABASE … TEMPLATE). */
export async function prepareTemplate(): Promise<void> {
  const build = scoped('ingest_bench_build');
  made.add(build).add(TEMPLATE_DB);
  const url = await createDatabaseFromTemplate(ADMIN_URL, build, 'template1');
  await migrate(url);
  await createDatabaseFromTemplate(ADMIN_URL, TEMPLATE_DB, build);
  await dropDatabase(ADMIN_URL, build);
}

export async function createBenchDatabase(name: string): Promise<string> {
  if (!name.startsWith('ingest_bench_')) throw new Error(`bench databases are named ingest_bench_*: ${name}`);
  made.add(scoped(name));
  return createDatabaseFromTemplate(ADMIN_URL, scoped(name), TEMPLATE_DB);
}

/**
 * A copy of a bench database (CREATE DATABASE … STRATEGY FILE_COPY: a checkpoint and a file copy,
 * not gigabytes of WAL). The source must have no open sessions.
 */
export async function cloneBenchDatabase(unscopedName: string, unscopedFrom: string): Promise<string> {
  if (!unscopedName.startsWith('ingest_bench_') || !unscopedFrom.startsWith('ingest_bench_'))
    throw new Error(`bench databases are named ingest_bench_*: ${unscopedName}, ${unscopedFrom}`);
  const [name, from] = [scoped(unscopedName), scoped(unscopedFrom)];
  made.add(name);
  await dropDatabase(ADMIN_URL, name);
  const c = createPool({ connectionString: ADMIN_URL, max: 1, applicationName: 'ingest-bench' });
  try {
    await c.query(`CREATE DATABASE ${name} TEMPLATE ${from} STRATEGY = FILE_COPY`);
  } finally {
    await c.end();
  }
  return withDatabase(ADMIN_URL, name);
}

/** A run's process is gone (its databases are left over); false when it still runs, or is not on this machine's view. */
function runEnded(name: string): boolean {
  const pid = Number(/^ingest_bench_p(\d+)_/.exec(name)?.[1]);
  if (!pid || pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/**
 * Drops every database this run made, and those left by an earlier run that was cut short (its
 * process is gone). Databases of a run still going are left alone, and so are unscoped
 * `ingest_bench_*` names of older checkouts (they drop their own).
 */
export async function dropBenchDatabases(): Promise<string[]> {
  const c = createPool({ connectionString: ADMIN_URL, max: 1, applicationName: 'ingest-bench' });
  let names: string[];
  try {
    names = (await c.query<{ datname: string }>(`SELECT datname FROM pg_database WHERE datname LIKE 'ingest\\_bench\\_p%'`)).rows
      .map((r) => r.datname)
      .filter(runEnded);
  } finally {
    await c.end();
  }
  const all = [...new Set([...made, ...names])];
  for (const n of all) await dropDatabase(ADMIN_URL, n);
  return all;
}

/** A pool or one of its clients. */
type Queryable = Pool | PoolClient;

export async function walLsn(c: Queryable): Promise<string> {
  return (await c.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn')).rows[0]!.lsn;
}

export async function walBytesSince(c: Queryable, from: string): Promise<number> {
  return Number((await c.query<{ d: string }>('SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1::pg_lsn)::text AS d', [from])).rows[0]!.d);
}

/**
 * The WAL written between two positions, by the relation each record's first block belongs to
 * (pg_walinspect, superuser; `CREATE EXTENSION pg_walinspect` in the database first): record bytes
 * and the full-page images among them. Records with no block (commit, …) go under `(no relation)`.
 */
export async function walByRelation(
  c: Queryable,
  from: string,
  to: string,
): Promise<Array<{ relation: string; bytes: number; fpi_bytes: number; records: number }>> {
  const { rows } = await c.query<{ relation: string; bytes: string; fpi_bytes: string; records: string }>(
    `WITH r AS (
       SELECT record_length, fpi_length, substring(block_ref from 'rel \\d+/\\d+/(\\d+)')::oid AS filenode
         FROM pg_get_wal_records_info($1::pg_lsn, $2::pg_lsn))
     SELECT COALESCE((SELECT c.oid::regclass::text FROM pg_class c WHERE pg_relation_filenode(c.oid) = r.filenode LIMIT 1),
                     CASE WHEN r.filenode IS NULL THEN '(no relation)' ELSE 'filenode ' || r.filenode END) AS relation,
            sum(record_length)::text AS bytes, sum(fpi_length)::text AS fpi_bytes, count(*)::text AS records
       FROM r GROUP BY 1 ORDER BY sum(record_length) DESC`,
    [from, to],
  );
  return rows.map((r) => ({ relation: r.relation, bytes: Number(r.bytes), fpi_bytes: Number(r.fpi_bytes), records: Number(r.records) }));
}

/** Time spent per SQL statement kind, recorded by a client wrapped with timedClient. */
export interface SqlTimes {
  byPhase: Map<string, number>;
  firstWriteAt: number | null;
  lastLoadEnd: number | null;
}

export function newSqlTimes(): SqlTimes {
  return { byPhase: new Map(), firstWriteAt: null, lastLoadEnd: null };
}

/** Names the projector's statements by what they do (the SQL text is the only thing a wrapper sees). */
export function phaseOf(sql: string): { phase: string; load: boolean } {
  const s = sql.replace(/\s+/g, ' ').trim();
  if (/^(BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE)/i.test(s)) return { phase: s.split(' ')[0]!.toLowerCase(), load: false };
  if (s.includes('pg_advisory_xact_lock')) return { phase: 'lock_shop', load: false };
  if (s.startsWith('/* floor */')) return { phase: 'floor_statement', load: false };
  if (s.startsWith('SELECT')) return { phase: 'load', load: true };
  // The projection names its tables without a schema (search_path, D26); runtime tables are qualified.
  if (/INTO (agent_runtime\.)?processed_commands/.test(s)) return { phase: 'claim', load: false };
  if (s.includes('_update_logs')) return { phase: 'log_insert', load: false };
  if (s.includes('inventory_daily_snapshots')) return { phase: 'daily_upsert', load: false };
  if (s.includes('agent_runtime.outbox')) return { phase: 'outbox', load: false };
  if (s.includes('agent_runtime.command_results')) return { phase: 'result', load: false };
  if (/INSERT INTO (sot\.)?inventory_levels|INSERT INTO (public\.)?order_line_master /.test(s)) return { phase: 'upsert', load: false };
  if (/^UPDATE (sot\.)?inventory_levels/.test(s)) return { phase: 'stamp', load: false };
  return { phase: 'other_sql', load: false };
}

/** The same client, with each query's time added to `times` by phase. */
export function timedClient(client: PoolClient, times: SqlTimes): PoolClient {
  const query = async (...args: unknown[]) => {
    const text = typeof args[0] === 'string' ? args[0] : String((args[0] as { text?: string }).text ?? '');
    const { phase, load } = phaseOf(text);
    const t0 = performance.now();
    if (!load && times.firstWriteAt === null && phase !== 'claim' && phase !== 'lock_shop' && !/^(begin|commit)/.test(phase))
      times.firstWriteAt = t0;
    try {
      return await (client.query as (...a: unknown[]) => Promise<unknown>)(...args);
    } finally {
      const t1 = performance.now();
      times.byPhase.set(phase, (times.byPhase.get(phase) ?? 0) + (t1 - t0));
      if (load) times.lastLoadEnd = t1;
    }
  };
  return new Proxy(client, {
    get(target, prop) {
      if (prop === 'query') return query;
      const v: unknown = Reflect.get(target, prop, target);
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

/**
 * A pool whose transactions are observed: the time of the first connect and of the end of the
 * last COMMIT, so a consumer's throughput is measured from its first to its last command.
 */
export interface ObservedPool {
  pool: Pool;
  firstConnect(): number | null;
  lastCommit(): number | null;
  commits(): number;
  /** Statement time summed over all clients, by phase (concurrent transactions add up). */
  sqlMs(): Record<string, number>;
  statements(): number;
}

export function observedPool(pool: Pool): ObservedPool {
  let first: number | null = null;
  let last: number | null = null;
  let commits = 0;
  let statements = 0;
  const byPhase = new Map<string, number>();
  const wrapClient = (client: PoolClient): PoolClient =>
    new Proxy(client, {
      get(target, prop) {
        if (prop === 'query')
          return async (...args: unknown[]) => {
            const text = typeof args[0] === 'string' ? args[0] : String((args[0] as { text?: string }).text ?? '');
            const t0 = performance.now();
            const r = await (target.query as (...a: unknown[]) => Promise<unknown>)(...args);
            const phase = phaseOf(text).phase;
            byPhase.set(phase, (byPhase.get(phase) ?? 0) + performance.now() - t0);
            statements++;
            if (args[0] === 'COMMIT') {
              last = performance.now();
              commits++;
            }
            return r;
          };
        const v: unknown = Reflect.get(target, prop, target);
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
  const proxy = new Proxy(pool, {
    get(target, prop) {
      if (prop === 'connect')
        return async () => {
          first ??= performance.now();
          return wrapClient(await target.connect());
        };
      const v: unknown = Reflect.get(target, prop, target);
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
  return {
    pool: proxy,
    firstConnect: () => first,
    lastCommit: () => last,
    commits: () => commits,
    sqlMs: () => Object.fromEntries(byPhase),
    statements: () => statements,
  };
}

/** COPY … FROM STDIN of a ready text-format buffer (a minimal pg Submittable: no extra dependency). */
export function copyIn(client: PoolClient, sql: string, data: Buffer): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    let rows = 0;
    let failed: Error | null = null;
    const submittable = {
      submit: (connection: { query(text: string): void }) => connection.query(sql),
      handleCopyInResponse: (connection: { sendCopyFromChunk(b: Buffer): void; endCopyFrom(): void }) => {
        for (let i = 0; i < data.length; i += 1 << 20) connection.sendCopyFromChunk(data.subarray(i, i + (1 << 20)));
        connection.endCopyFrom();
      },
      handleCommandComplete: (msg: { text?: string }) => {
        rows = Number(/(\d+)$/.exec(msg.text ?? '')?.[1] ?? 0);
      },
      handleReadyForQuery: () => (failed ? reject(failed) : resolve(rows)),
      handleError: (err: Error) => {
        failed = err;
        reject(err);
      },
      handleRowDescription: () => {},
      handleDataRow: () => {},
      handleEmptyQuery: () => {},
      handlePortalSuspended: () => {},
      handleCopyData: () => {},
    };
    (client.query as unknown as (s: unknown) => void).call(client, submittable);
  });
}

/** Text-format COPY field. */
export function copyField(v: unknown): string {
  if (v === null || v === undefined) return '\\N';
  const text = typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : JSON.stringify(v);
  return text.replace(/\\/g, '\\\\').replace(/\t/g, '\\t').replace(/\n/g, '\\n').replace(/\r/g, '\\r');
}

export interface PlanSummary {
  query: string;
  node_types: string[];
  relations: Array<{ relation: string; node: string; index?: string }>;
  seq_scan_on_big_table: boolean;
  execution_ms: number;
}

/** EXPLAIN (ANALYZE, BUFFERS) of a load query in a transaction that is rolled back. */
export async function explainLoad(
  c: PoolClient,
  name: string,
  sql: string,
  params: unknown[],
  bigTables: Set<string>,
): Promise<PlanSummary> {
  await c.query('BEGIN');
  try {
    const r = await c.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode; 'Execution Time': number }> }>(
      `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${sql}`,
      params,
    );
    const top = r.rows[0]!['QUERY PLAN'][0]!;
    const nodes: PlanNode[] = [];
    const walk = (n: PlanNode) => {
      nodes.push(n);
      for (const k of n.Plans ?? []) walk(k);
    };
    walk(top.Plan);
    const relations = nodes
      .filter((n) => n['Relation Name'] || n['Index Name'])
      .map((n) => ({
        relation: n['Relation Name'] ?? '(index)',
        node: n['Node Type'],
        ...(n['Index Name'] ? { index: n['Index Name'] } : {}),
      }));
    return {
      query: name,
      node_types: [...new Set(nodes.map((n) => n['Node Type']))],
      relations,
      seq_scan_on_big_table: relations.some((r) => r.node === 'Seq Scan' && bigTables.has(r.relation)),
      execution_ms: Math.round(top['Execution Time'] * 100) / 100,
    };
  } finally {
    await c.query('ROLLBACK');
  }
}

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  Plans?: PlanNode[];
}

export async function serverSettings(c: PoolClient): Promise<Record<string, string>> {
  const names = [
    'server_version',
    'shared_buffers',
    'work_mem',
    'synchronous_commit',
    'fsync',
    'wal_level',
    'full_page_writes',
    'max_wal_size',
    'checkpoint_timeout',
    'wal_compression',
    'jit',
  ];
  const { rows } = await c.query<{ name: string; setting: string }>(
    `SELECT name, current_setting(name) AS setting FROM pg_settings WHERE name = ANY($1::text[])`,
    [names],
  );
  return Object.fromEntries(rows.map((r) => [r.name, r.setting]));
}
