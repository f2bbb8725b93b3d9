import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createDatabaseFromTemplate, createPool, dropDatabase, PREPARED_PER_SESSION, type Pool } from './index.ts';

// Parametrised statements run as prepared statements of their session (pool.ts preparedStatements),
// on a real PostgreSQL: what the session holds, the cap, and what must still hold once a plan is
// cached (a failed prepare, another search path, a migration adding a column).
const name = `ingest_prepared_${randomUUID().slice(0, 8)}`;
let pool: Pool;
beforeAll(async () => {
  pool = createPool({ connectionString: await createDatabaseFromTemplate(inject('adminDatabaseUrl'), name, 'template1'), max: 1 });
});
afterAll(async () => {
  await pool?.end();
  await dropDatabase(inject('adminDatabaseUrl'), name);
});

const prepared = async (): Promise<string[]> =>
  (await pool.query<{ statement: string }>('SELECT statement FROM pg_prepared_statements ORDER BY prepare_time')).rows.map(
    (r) => r.statement,
  );

describe('prepared statements of a session', () => {
  it('a statement with values is prepared once and reused; one without values is not', async () => {
    for (let i = 0; i < 3; i++) expect((await pool.query<{ n: number }>('SELECT $1::int + 1 AS n', [i])).rows[0]!.n).toBe(i + 1);
    await pool.query('SELECT 42');
    expect((await prepared()).filter((s) => s.includes('$1::int + 1'))).toHaveLength(1);
    expect((await prepared()).some((s) => s.includes('SELECT 42'))).toBe(false);
  });

  it('prepares at most PREPARED_PER_SESSION statements; texts past the cap still run, unnamed', async () => {
    for (let i = 0; i < PREPARED_PER_SESSION + 20; i++)
      expect((await pool.query<{ n: number }>(`SELECT $1::int + ${i} AS n`, [1])).rows[0]!.n).toBe(1 + i);
    expect((await prepared()).length).toBe(PREPARED_PER_SESSION);
  });

  it('a statement whose prepare failed is prepared again, and a cached plan follows migrations and the search path', async () => {
    const c = await createPool({ connectionString: pool.options.connectionString!, max: 1 }).connect();
    try {
      await expect(c.query('SELECT a FROM t WHERE a > $1', [0])).rejects.toThrow(/relation "t" does not exist/);
      await c.query('CREATE SCHEMA one; CREATE SCHEMA two; CREATE TABLE one.t (a int); CREATE TABLE two.t (a int)');
      await c.query('INSERT INTO one.t VALUES (1); INSERT INTO two.t VALUES (2)');
      await c.query('SET search_path = one');
      expect((await c.query<{ a: number }>('SELECT a FROM t WHERE a > $1', [0])).rows).toEqual([{ a: 1 }]);
      // A column added under the cached plan: the statement names its columns, its result type holds.
      await c.query('ALTER TABLE one.t ADD COLUMN b int');
      expect((await c.query<{ a: number }>('SELECT a FROM t WHERE a > $1', [0])).rows).toEqual([{ a: 1 }]);
      // A `SELECT *` whose result type a migration changed fails once, then runs unnamed.
      expect((await c.query('SELECT * FROM t WHERE a > $1', [0])).rows).toEqual([{ a: 1, b: null }]);
      await c.query('ALTER TABLE one.t ADD COLUMN c int');
      await expect(c.query('SELECT * FROM t WHERE a > $1', [0])).rejects.toThrow(/cached plan must not change result type/);
      expect((await c.query('SELECT * FROM t WHERE a > $1', [0])).rows).toEqual([{ a: 1, b: null, c: null }]);
      // Another search path (the rebuild's shadow schema, D26) resolves the names again.
      await c.query('SET search_path = two');
      expect((await c.query<{ a: number }>('SELECT a FROM t WHERE a > $1', [0])).rows).toEqual([{ a: 2 }]);
      // A table moved away and another moved in (the in-place swap): the plan follows the name.
      await c.query(
        'ALTER TABLE one.t RENAME TO t_old; ALTER TABLE two.t SET SCHEMA one; CREATE TABLE two.t (a int); INSERT INTO two.t VALUES (3)',
      );
      expect((await c.query<{ a: number }>('SELECT a FROM t WHERE a > $1', [0])).rows).toEqual([{ a: 3 }]);
    } finally {
      c.release();
    }
  });
});
