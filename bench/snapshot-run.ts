// A run of snapshots in one statement (projectSnapshotRun) against a statement per command
// (projectSnapshotSet), on stored levels: GROUP snapshots of LINES lines each (random ranges of
// 20,000 products, 4 locations, quantities that change every time) in one transaction, the two ways
// interleaved round by round, ROUNDS rounds each. Prints ms per group (medians and every round).
// `node scripts/bootstrap.mjs bench/snapshot-run.ts` (LINES=200 GROUP=16 ROUNDS=6 by default);
// docs/benchmarks.md "A run of snapshots in one statement".
import { createPool, lockShop, withTransaction } from '@ingest/db';
import type { InventorySnapshotCommand } from '@ingest/domain';
import { projectSnapshotRun, projectSnapshotSet } from '@ingest/projection';
import { createBenchDatabase, dropBenchDatabases, prepareTemplate } from './lib/db.ts';

const SHOP = 'run.example';
const PRODUCTS = 20_000;
const LINES = Number(process.env['LINES'] ?? 200);
const GROUP = Number(process.env['GROUP'] ?? 16);
const ROUNDS = Number(process.env['ROUNDS'] ?? 6);
const LOCATIONS = [1, 2, 3, 4].map((i) => `01900000-0000-7000-8000-0000000000a${i}`);

await prepareTemplate();
const pool = createPool({ connectionString: await createBenchDatabase('ingest_bench_snapshot_run'), max: 1 });
try {
  const seed = '01900000-0000-7000-8000-000000000000';
  await pool.query(
    `INSERT INTO sot.locations (location_id, shop, name, created_at, updated_at, last_command_id)
     SELECT l, $2, l::text, now(), now(), $3 FROM unnest($1::uuid[]) l`,
    [LOCATIONS, SHOP, seed],
  );
  await pool.query(
    `INSERT INTO public.products (product_id, shop, barcode, product_name, created_at, updated_at, last_command_id)
     SELECT md5($1 || '|' || b)::uuid, $1, b, b, now(), now(), $2 FROM generate_series(1, $3::int) g, LATERAL (SELECT '49' || lpad(g::text, 11, '0') AS b) x`,
    [SHOP, seed, PRODUCTS],
  );
  await pool.query(
    `INSERT INTO sot.inventory_levels (shop, product_id, location_id, barcode, on_hand_qty, available_qty, allocated_qty, reserved_qty, incoming_qty,
            last_absolute_as_of, stock_event_seq, created_at, updated_at, last_command_id)
     SELECT p.shop, p.product_id, l, p.barcode, 5, 5, 0, 0, 0, '2025-01-01', 0, now(), now(), $2
       FROM public.products p, unnest($1::uuid[]) l WHERE p.shop = $3`,
    [LOCATIONS, seed, SHOP],
  );
  await pool.query('VACUUM ANALYZE');
  let n = 0;
  const snapshot = (k: number): InventorySnapshotCommand => {
    n++;
    const ms = Date.parse('2026-11-02T00:00:00Z') + n * 1000;
    const hex = ms.toString(16).padStart(12, '0');
    const start = Math.floor(Math.random() * (PRODUCTS - LINES));
    return {
      command_id: `${hex.slice(0, 8)}-${hex.slice(8)}-7000-8000-${String(n).padStart(12, '0')}`,
      kind: 'inventory.snapshot',
      shop: SHOP,
      received_at: new Date(ms).toISOString(),
      source: { endpoint: '/bench' },
      actor: 'platform',
      source_system: 'pos',
      inventory_as_of: new Date(ms).toISOString(),
      payload: {
        location: { location_id: LOCATIONS[k % LOCATIONS.length]! },
        snapshot_date: '2026-11-02',
        lines: Array.from({ length: LINES }, (_, i) => ({
          barcode: `49${String(start + i + 1).padStart(11, '0')}`,
          on_hand_qty: 10 + (n % 7),
          available_qty: 5 + (n % 5),
        })),
      },
    };
  };
  const ways = ['statement per command', 'one statement for the run'] as const;
  const times = new Map<string, number[]>(ways.map((w) => [w, []]));
  for (let r = 0; r < ROUNDS; r++) {
    for (const way of r % 2 ? [...ways].reverse() : ways) {
      const items = Array.from({ length: GROUP }, (_, k) => {
        const c = snapshot(k);
        return { c, locationId: LOCATIONS[k % LOCATIONS.length]! };
      });
      const t = performance.now();
      await withTransaction(pool, async (tx) => {
        await lockShop(tx, SHOP);
        if (way === 'one statement for the run') await projectSnapshotRun(tx, items);
        else for (const { c, locationId } of items) await projectSnapshotSet(tx, c, locationId);
      });
      times.get(way)!.push(performance.now() - t);
    }
    // The projector's table upkeep analyzes as it goes; so does the bench, every third round.
    if (r % 3 === 2) await pool.query('VACUUM ANALYZE sot.inventory_levels, sot.inventory_daily_snapshots');
  }
  for (const [way, ms] of times) {
    const median = [...ms].sort((a, b) => a - b)[Math.floor(ms.length / 2)]!;
    console.log(`${way}: ${GROUP} x ${LINES} lines, median ${median.toFixed(0)} ms (${ms.map((x) => x.toFixed(0)).join(' ')})`);
  }
} finally {
  await pool.end();
  await dropBenchDatabases();
}
