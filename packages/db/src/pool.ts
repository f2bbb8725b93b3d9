import pg from 'pg';

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;

// numeric -> JS number: prices and amounts round-trip exactly for the values JSON can carry.
pg.types.setTypeParser(pg.types.builtins.NUMERIC, (v) => Number(v));
// int8 (counts, offsets) -> number; our counts stay far below 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));
// date stays a 'YYYY-MM-DD' string: no time-zone shift.
pg.types.setTypeParser(pg.types.builtins.DATE, (v) => v);

export interface PoolOptions {
  connectionString: string;
  /** Role the sessions act as (D25): the service role cannot alter the schema. */
  role?: string;
  max?: number;
  applicationName?: string;
  /**
   * Where unqualified table names resolve. The projection SQL names its tables without a schema
   * so that a rebuild can run the same statements against a shadow schema (D26); live sessions
   * resolve them in the data model's schemas (table names are unique across them).
   */
  searchPath?: string[];
}

/** The data model's schemas (migrations/): the live projection's tables resolve here. */
export const LIVE_SEARCH_PATH = ['sot', 'public', 'agent_runtime'];

function sessionOptions(opts: PoolOptions): string {
  const path = (opts.searchPath ?? LIVE_SEARCH_PATH).join(',');
  if (!/^[a-z_][a-z0-9_,]*$/.test(path)) throw new Error(`invalid search path: ${path}`);
  return [`-c search_path=${path}`, ...(opts.role ? [`-c role=${opts.role}`] : [])].join(' ');
}

export function createPool(opts: PoolOptions): Pool {
  const pool = new pg.Pool({
    connectionString: opts.connectionString,
    max: opts.max ?? 10,
    application_name: opts.applicationName ?? 'ingest',
    options: sessionOptions(opts),
  });
  // An idle client's error (server restart) must not crash the process; the pool replaces it.
  pool.on('error', () => {});
  return pool;
}

export async function withTransaction<T>(pool: Pool, fn: (tx: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  } finally {
    client.release();
  }
}
