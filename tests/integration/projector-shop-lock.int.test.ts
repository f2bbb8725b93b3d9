import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { availableDeltaCommand } from '../../bench/lib/commands.ts';
import { applyCommand } from '@ingest/projection';
import { INGEST_SECRET, post, startPipeline, waitFor, type TestPipeline } from '../support/pipeline.ts';

// Two transactions for the same shop never interleave: the second waits for the first's shop lock
// and then loads what it committed. Normally the shop's commands share a partition and are claimed
// in order; this holds even when they do not (a repartitioned topic, a second projector group).
let p: TestPipeline;
let locationId: string;
const shop = 'shop-lock.example';
const h = { 'x-ingest-secret': INGEST_SECRET };

beforeAll(async () => {
  p = await startPipeline();
  const loc = await post(`${p.url()}/api/admin/locations`, { shop, locations: [{ name: 'Main' }] }, h);
  locationId = loc.json.locations[0].location_id;
  expect((await post(`${p.url()}/api/ingest/products`, { shop, products: [{ barcode: 'A', product_name: 'Apple' }] }, h)).status).toBe(200);
  const set = await post(
    `${p.url()}/api/ingest/inventory-available`,
    { shop, source_system: 'pos', mode: 'absolute', location_id: locationId, lines: [{ barcode: 'A', available_qty: 10 }] },
    h,
  );
  expect(set.status, set.text).toBe(200);
  await p.stopProjector();
});
afterAll(async () => {
  await p?.stop();
});

/**
 * Two transactions of one shop, opened together: the second waits on the shop lock until the first
 * commits. `opts` as applyCommand takes them; each command on its own partition (`at`).
 */
async function twoTransactions(deltas: [number, number], opts: Parameters<typeof applyCommand>[3]): Promise<void> {
  const [a, b] = [await p.db.connect(), await p.db.connect()];
  try {
    await a.query('BEGIN');
    await b.query('BEGIN');
    const at = (partition: number) => ({ topic: 'shop-lock-test', partition, offset: '1' });
    expect(
      await applyCommand(a, availableDeltaCommand(shop, locationId, [{ barcode: 'A', available_delta: deltas[0] }]), at(0), opts),
    ).toBe('applied');
    const second = applyCommand(b, availableDeltaCommand(shop, locationId, [{ barcode: 'A', available_delta: deltas[1] }]), at(1), opts);
    await waitFor(
      async () =>
        (
          await p.db.query(
            `SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND wait_event = 'advisory' AND datname = current_database()`,
          )
        ).rows.length > 0,
      10_000,
      'the second transaction waiting on the shop lock',
    );
    await a.query('COMMIT');
    expect(await second).toBe('applied');
    await b.query('COMMIT');
  } finally {
    a.release();
    b.release();
  }
}

async function availableLogs(): Promise<Array<{ before: string; after: string }>> {
  const logs = await p.db.query(
    `SELECT before_data->>'available_qty' AS before, after_data->>'available_qty' AS after FROM sot.inventory_update_logs
      WHERE shop = $1 AND change_type = 'available_delta' ORDER BY created_at, log_seq`,
    [shop],
  );
  return logs.rows;
}

describe('shop lock', () => {
  it('a second transaction on the same shop waits for the first and applies on top of it (no lost update)', async () => {
    await twoTransactions([-3, -4], { sideEffects: null });
    const level = await p.db.query(`SELECT available_qty FROM sot.inventory_levels WHERE shop = $1`, [shop]);
    expect(level.rows).toEqual([{ available_qty: 3 }]);
    expect(await availableLogs()).toEqual([
      { before: '10', after: '7' },
      { before: '7', after: '3' },
    ]);
  });

  it('the same as the live projector applies (claim, position and lock in one statement, with outbox and reply)', async () => {
    await twoTransactions([-1, -2], { sideEffects: { topics: p.topics }, checkpoint: true, parkBehind: { message: Buffer.from('{}') } });
    const level = await p.db.query(`SELECT available_qty FROM sot.inventory_levels WHERE shop = $1`, [shop]);
    expect(level.rows).toEqual([{ available_qty: 0 }]);
    expect((await availableLogs()).slice(2)).toEqual([
      { before: '3', after: '2' },
      { before: '2', after: '0' },
    ]);
  });
});
