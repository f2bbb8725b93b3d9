import { describe, expect, it } from 'vitest';
import { PLAN_WITH_VALUES_FROM_LINES } from '@ingest/db';
import type { InventoryAvailableCommand, InventorySnapshotCommand } from '@ingest/domain';
import { scratchDatabase } from '@ingest/db/testing';
import { command, LOC1, reset } from '../../../testing/inventoryEquivalence.ts';
import { projectSnapshotSet } from '../snapshot/snapshotSet.ts';
import { writeLevels } from './levelWrites.ts';

// A set-based statement of a large command runs unnamed, planned with its values (pool.ts
// querySized): as a prepared statement it gets a generic plan after five calls, in which its
// line arrays are unknown parameters searched linearly for every row a scan reads (a 10,000-line
// snapshot: 2.9 s instead of 0.4 s). A small command's statement stays prepared: planning is most
// of its work.
const db = scratchDatabase('plan_values', 1);

async function preparedSetBased(): Promise<string[]> {
  const { rows } = await db.pool.query<{ statement: string }>('SELECT statement FROM pg_prepared_statements');
  return rows.map((r) => /\/\* (\w+), set-based \*\//.exec(r.statement)?.[1]).filter((k): k is string => k !== undefined);
}

const snapshot = (n: number, i: number) =>
  command(
    {
      kind: 'inventory.snapshot',
      asOf: '2026-11-02T01:00:00.000Z',
      payload: {
        location: { location_id: LOC1 },
        snapshot_date: '2026-11-02',
        lines: Array.from({ length: n }, (_, k) => ({ barcode: ['A', 'B', 'C', 'Z'][k % 4]!, on_hand_qty: k + i })),
      },
    },
    i,
  ) as InventorySnapshotCommand;

const available = (i: number) =>
  command(
    {
      kind: 'inventory.available',
      asOf: '2026-11-02T01:00:00.000Z',
      payload: { mode: 'absolute', location: { location_id: LOC1 }, lines: [] } as never,
    },
    100 + i,
  ) as InventoryAvailableCommand;

async function run(n: number): Promise<void> {
  const client = await db.pool.connect();
  try {
    for (let i = 0; i < 7; i++) {
      await client.query('BEGIN');
      await projectSnapshotSet(client, snapshot(n, i), LOC1);
      const lines = Array.from({ length: n }, (_, k) => ({
        barcode: ['A', 'B', 'C'][k % 3]!,
        location_id: LOC1,
        values: [null, k + i, null, null, null],
      }));
      await writeLevels(client, available(i), lines, 'available_set');
      await client.query('ROLLBACK');
    }
  } finally {
    client.release();
  }
}

describe('set-based statements of large commands are planned with their values', () => {
  it(`from ${PLAN_WITH_VALUES_FROM_LINES} lines the snapshot and level writes run unnamed; below, prepared`, async () => {
    await reset(db.pool);
    await run(PLAN_WITH_VALUES_FROM_LINES);
    expect(await preparedSetBased()).toEqual([]);
    await run(PLAN_WITH_VALUES_FROM_LINES - 1);
    expect((await preparedSetBased()).sort()).toEqual(['levels', 'snapshot']);
  });
});
