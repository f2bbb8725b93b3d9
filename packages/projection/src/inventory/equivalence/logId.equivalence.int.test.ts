import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { logId } from '@ingest/domain';
import { scratchDatabase } from '@ingest/db/testing';

// The set-based statements (snapshot/snapshotSet.ts, store/levelWrites.ts) derive their update-log
// ids inside PostgreSQL; the deciders with ids.ts logId. Both must give the same ids (D3).
const db = scratchDatabase('setb_logid', 1);

async function sqlIds(pairs: ReadonlyArray<readonly [string, number]>): Promise<string[]> {
  const { rows } = await db.pool.query<{ id: string }>(
    'SELECT agent_runtime.log_id(c, n)::text AS id FROM unnest($1::uuid[], $2::int[]) WITH ORDINALITY AS t(c, n, o) ORDER BY o',
    [pairs.map(([c]) => c), pairs.map(([, n]) => n)],
  );
  return rows.map((r) => r.id);
}

describe('set-based log ids', () => {
  it('agent_runtime.log_id derives the ids of ids.ts logId (D3)', async () => {
    const ids = [
      ['0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b', 0],
      ['0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b', 9_999],
      ['01900000-0000-7000-8000-000000000001', 262_200],
    ] as const;
    expect(await sqlIds(ids)).toEqual(ids.map(([c, n]) => logId(c, n)));
  });

  it('for any command id and any n of a command (up to a million lines), batch by batch', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.uuid(), fc.integer({ min: 0, max: 1_000_000 })), { minLength: 1, maxLength: 200 }),
        async (pairs) => {
          expect(await sqlIds(pairs)).toEqual(pairs.map(([c, n]) => logId(c, n)));
        },
      ),
      { numRuns: 25 },
    );
  });

  it('is inlined into the statement that calls it: no function call per log row', async () => {
    // An IMMUTABLE SQL function is inlined only if its body is immutable too (convert_to, STABLE,
    // kept the first body out): run through the function executor it cost 8 µs a row, ~11 % of a
    // 10,000-line snapshot's statement (migrations/1765100000000_inline-log-id.sql).
    const { rows } = await db.pool.query<{ 'QUERY PLAN': string }>(
      "EXPLAIN (VERBOSE) SELECT agent_runtime.log_id('0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b'::uuid, g) FROM generate_series(1, 3) g",
    );
    const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
    expect(plan).not.toContain('log_id(');
    expect(plan).toContain('digest(');
  });
});
