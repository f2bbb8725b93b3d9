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
}

export function createPool(opts: PoolOptions): Pool {
  const pool = new pg.Pool({
    connectionString: opts.connectionString,
    max: opts.max ?? 10,
    application_name: opts.applicationName ?? 'ingest',
    ...(opts.role ? { options: `-c role=${opts.role}` } : {}),
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
