import { describe, expect, it } from 'vitest';
import { logId } from '@ingest/domain';
import { scratchDatabase } from '@ingest/db/testing';

// The set-based statements (snapshot/snapshotSet.ts, store/levelWrites.ts) derive their update-log
// ids inside PostgreSQL; the deciders with ids.ts logId. Both must give the same ids (D3).
const db = scratchDatabase('setb_logid', 1);

describe('set-based log ids', () => {
  it('agent_runtime.log_id derives the ids of ids.ts logId (D3)', async () => {
    const ids = [
      ['0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b', 0],
      ['0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b', 9_999],
      ['01900000-0000-7000-8000-000000000001', 262_200],
    ] as const;
    for (const [c, n] of ids) {
      const { rows: r } = await db.pool.query<{ id: string }>('SELECT agent_runtime.log_id($1, $2)::text AS id', [c, n]);
      expect(r[0]!.id).toBe(logId(c, n));
    }
  });
});
