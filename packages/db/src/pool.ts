import pg from 'pg';

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;
/** What a statement runs on: the pool, a transaction's client, or a session of its own (pg.Client). */
export type Queryable = Pick<pg.ClientBase, 'query'>;

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
  /** How long to wait for a connection before failing (unreachable database: fail fast, answer 503). */
  connectionTimeoutMs?: number;
  /** Called when a pooled client loses its connection (logged by the caller; the pool replaces it). */
  onError?: (err: Error) => void;
  /** Parametrised statements run as prepared statements of their session (default true; see preparedStatements). */
  prepare?: boolean;
}

/** Distinct statements a session prepares at most; any others run unnamed (a text built per call must not grow it). */
export const PREPARED_PER_SESSION = 200;

/**
 * Runs each parametrised statement of a session (`query(text, values)`) as a named prepared statement:
 * parsed and planned once per connection instead of on every call. The projection's set-based
 * statements are large CTEs whose planning cost more than their execution: a 20-line snapshot
 * planned in 1.8 ms and ran in 0.6 ms; named, 200 calls on one connection took 0.42 ms each instead
 * of 2.49 ms (docs/benchmarks.md "Replay at log scale").
 * PostgreSQL re-plans a prepared statement when a table it reads is altered or moved, or when the
 * search path differs (the in-place rebuild's swap, D26), and the statements name their result
 * columns, so a column added by a migration does not change their result type.
 */
export function preparedStatements(client: pg.ClientBase, limit = PREPARED_PER_SESSION): void {
  // null: a statement this session runs unnamed from now on (its result type changed, below).
  const names = new Map<string, string | null>();
  let count = 0;
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  // A migration that changes what a `SELECT *` returns leaves its prepared statement failing with
  // "cached plan must not change result type" until it is deallocated: this session then runs
  // that text unnamed (the failed call's caller retries, as for any transient error).
  const stale = (text: string, err: unknown): void => {
    if ((err as { code?: string }).code === '0A000' && /result type/.test(String((err as Error).message))) names.set(text, null);
  };
  client.query = ((...args: unknown[]) => {
    // query(text, values) from a transaction, query(text, values, callback) from pool.query.
    const [text, values, callback] = args;
    if (typeof text === 'string' && Array.isArray(values) && args.length <= 3 && (args.length === 2 || typeof callback === 'function')) {
      let name = names.get(text);
      if (name === undefined && count < limit) {
        name = `ingest_${count++}`;
        names.set(text, name);
      }
      if (name) {
        if (typeof callback === 'function')
          return query({ name, text, values }, (err: unknown, res: unknown) => {
            if (err) stale(text, err);
            (callback as (err: unknown, res: unknown) => void)(err, res);
          });
        return (query({ name, text, values }) as Promise<unknown>).catch((err: unknown) => {
          stale(text, err);
          throw err;
        });
      }
    }
    return query(...args);
  }) as typeof client.query;
}

/**
 * A statement whose parameters include arrays as long as the command (its `lines`): from
 * PLAN_WITH_VALUES_FROM_LINES lines it runs unnamed so that PostgreSQL plans it with their values: a custom plan, where a bound array is a constant the planner
 * can size and hash (`= ANY($n)` tested in O(1) a row). A named prepared statement switches to a
 * generic plan after five calls on its session, in which the array is an unknown parameter searched
 * linearly for every row a scan reads. Measured on one session, 32 locations, medians of 16 calls
 * (the snapshot statement, prepared as before / planned with its values): 20 lines 1.4 / 1.4 ms,
 * 100 lines 4.8 / 5.7 ms, 200 lines 9.9 / 9.8 ms, 400 lines 19.1 / 13.9 ms, 1,000 lines 60 / 31 ms,
 * 10,000 lines 2,900-3,000 / 380-420 ms. Below the crossover the prepared plan wins: planning is most
 * of a small statement's work (preparedStatements).
 */
export async function querySized<R extends pg.QueryResultRow>(
  client: Queryable,
  text: string,
  values: unknown[],
  lines: number,
): Promise<pg.QueryResult<R>> {
  // A config object passes preparedStatements by: the statement runs unnamed.
  return lines >= PLAN_WITH_VALUES_FROM_LINES ? client.query<R>({ text, values }) : client.query<R>(text, values);
}

/** How many lines make a set-based statement worth planning with its values (querySized). */
export const PLAN_WITH_VALUES_FROM_LINES = 200;

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
    connectionTimeoutMillis: opts.connectionTimeoutMs ?? 5000,
    // A socket half-open after a network fault is found by TCP keepalive rather than never.
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  });
  const onError = opts.onError ?? (() => {});
  // An idle client's error (server restart) must not crash the process; the pool replaces it.
  pool.on('error', onError);
  // Nor a checked-out client's (ECONNRESET in the middle of a transaction): node-postgres emits
  // 'error' on the client, and an EventEmitter without a listener throws. The query in flight
  // rejects on its own; the owner of the transaction sees that and retries.
  pool.on('connect', (client) => {
    client.on('error', onError);
    if (opts.prepare ?? true) preparedStatements(client);
  });
  return pool;
}

export async function withTransaction<T>(pool: Pool, fn: (tx: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch((rollbackErr: unknown) => {
      // A client that cannot even roll back has lost its connection: do not hand it out again.
      broken = rollbackErr instanceof Error ? rollbackErr : new Error(String(rollbackErr));
    });
    throw err;
  } finally {
    client.release(broken);
  }
}
