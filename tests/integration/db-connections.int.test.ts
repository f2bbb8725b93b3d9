import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { classifyDbError, createListener, createPool, withTransaction, type Pool } from '@ingest/db';
import { startPipeline, waitFor, type TestPipeline } from '../support/pipeline.ts';

// Connection faults (docs/operations.md "Faults and outages") at the level of the connections themselves.
let p: TestPipeline;
let pool: Pool;

beforeAll(async () => {
  p = await startPipeline({ gateway: false, projector: false });
  pool = createPool({ connectionString: p.databaseUrl, max: 2, applicationName: 'test-pool' });
});
afterAll(async () => {
  await pool.end();
  await p.stop();
});

const terminate = (applicationName: string) =>
  p.db.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1', [
    applicationName,
  ]);

describe('connections', () => {
  it('a checked-out client killed in the middle of a transaction rejects that transaction as unavailable, crashes nothing, and the pool serves the next one', async () => {
    const failed = await withTransaction(pool, async (tx) => {
      await tx.query('SELECT 1');
      await terminate('test-pool');
      await new Promise((r) => setTimeout(r, 100)); // the FATAL arrives while the client is checked out and idle
      return tx.query('SELECT 1');
    }).then(
      () => null,
      (err: unknown) => err,
    );
    expect(failed).not.toBeNull();
    expect(classifyDbError(failed)).toBe('unavailable');
    expect((await withTransaction(pool, (tx) => tx.query<{ n: number }>('SELECT 2 AS n'))).rows[0]?.n).toBe(2);
  });

  it('the LISTEN connection comes back after every loss, LISTENs again and tells its subscribers to sweep', async () => {
    const listener = createListener({
      connectionString: p.databaseUrl,
      applicationName: 'test-listen',
      minBackoffMs: 20,
      maxBackoffMs: 200,
    });
    const got: string[] = [];
    let connects = 0;
    listener.subscribe('test_channel', (payload) => got.push(payload));
    listener.onConnect(() => connects++);
    try {
      await waitFor(async () => listener.connected(), 5000, 'connected');
      for (const round of [1, 2, 3]) {
        await terminate('test-listen');
        await waitFor(async () => connects === round + 1 && listener.connected(), 5000, `reconnect ${round}`);
        await p.db.query(`SELECT pg_notify('test_channel', $1)`, [`after loss ${round}`]);
        await waitFor(async () => got.includes(`after loss ${round}`), 5000, `notification after loss ${round}`);
      }
    } finally {
      await listener.close();
    }
  });
});
