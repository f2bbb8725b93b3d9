import { describe, expect, it } from 'vitest';
import type { InventoryAvailableCommand, InventorySnapshotCommand } from '@ingest/domain';
import { scratchDatabase } from '@ingest/db/testing';
import { command, LOC1, reset } from '../../../testing/inventoryEquivalence.ts';
import { SNAPSHOT_SQL, snapshotParams } from '../snapshot/snapshotSet.ts';
import { LEVELS_SQL, levelWritesParams } from './levelWrites.ts';

// The set-based statements test membership in the command's barcodes against bound arrays, which
// the planner folds into constants and hashes: O(1) a row whichever index it picks. An array built
// at run time (`= ANY(ARRAY(SELECT ...))`, shown as `ANY ($n)` in a plan) is searched linearly for
// every row a scan reads: when the statistics do not know a new business date or location yet, the
// planner scans and filters, 10,000 x 5,000 comparisons for a 10,000-line snapshot (143 of 487 ms).
const db = scratchDatabase('scan_arrays', 1);
const READ = new Set(['products', 'inventory_levels', 'inventory_daily_snapshots']);

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  Plans?: PlanNode[];
  [k: string]: unknown;
}

/** Every condition a scan of the read tables evaluates, as the plan prints it. */
function scanConditions(node: PlanNode, out: string[] = []): string[] {
  if (node['Relation Name'] && READ.has(node['Relation Name']) && !node['Node Type'].startsWith('Modify'))
    for (const k of ['Filter', 'Index Cond', 'Recheck Cond'])
      if (typeof node[k] === 'string') out.push(`${node['Relation Name']}: ${node[k]}`);
  for (const p of node.Plans ?? []) scanConditions(p, out);
  return out;
}

/**
 * The columns tested against an array computed at run time. Not `ctid`: the writes find their rows
 * by tuple id, a TID scan on any table of size (it sorts the array into a list of ids once; a tiny
 * test table may get a sequential scan instead).
 */
function runTimeArrayTests(conditions: string[]): string[] {
  return conditions.flatMap((s) => [...s.matchAll(/(\w+) = ANY \(\$\d+\)/g)].map((m) => m[1]!)).filter((column) => column !== 'ctid');
}

async function plan(sql: string, params: unknown[]): Promise<string[]> {
  const { rows } = await db.pool.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(`EXPLAIN (FORMAT JSON, VERBOSE) ${sql}`, params);
  return scanConditions(rows[0]!['QUERY PLAN'][0]!.Plan);
}

const lines = Array.from({ length: 40 }, (_, i) => ({ barcode: ['A', 'B', 'C', 'Z'][i % 4]!, on_hand_qty: i }));

describe('the set-based reads of the levels, daily rows and products', () => {
  it('a snapshot tests its barcodes against a constant array, never an array computed at run time', async () => {
    await reset(db.pool);
    const c = command(
      {
        kind: 'inventory.snapshot',
        asOf: '2026-11-02T01:00:00.000Z',
        payload: { location: { location_id: LOC1 }, snapshot_date: '2026-11-02', lines },
      },
      1,
    );
    const conditions = await plan(SNAPSHOT_SQL, snapshotParams(c as InventorySnapshotCommand, LOC1));
    expect(conditions.length).toBeGreaterThanOrEqual(3);
    expect(runTimeArrayTests(conditions)).toEqual([]);
  });

  it('a levels or available write does too', async () => {
    await reset(db.pool);
    const c = command(
      {
        kind: 'inventory.available',
        asOf: '2026-11-02T01:00:00.000Z',
        payload: { mode: 'absolute', location: { location_id: LOC1 }, lines: [] } as never,
      },
      2,
    );
    const writes = lines.map((l) => ({ barcode: l.barcode, location_id: LOC1, values: [null, l.on_hand_qty, null, null, null] }));
    const conditions = await plan(LEVELS_SQL, levelWritesParams(c as InventoryAvailableCommand, writes, 'available_set'));
    expect(conditions.length).toBeGreaterThanOrEqual(2);
    expect(runTimeArrayTests(conditions)).toEqual([]);
  });
});
