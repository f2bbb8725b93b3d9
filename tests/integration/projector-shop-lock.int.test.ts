import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { availableDeltaCommand } from '../../bench/lib/commands.ts';
import { applyCommand } from '../../services/projector/src/applyCommand.ts';
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

describe('shop lock', () => {
  it('a second transaction on the same shop waits for the first and applies on top of it (no lost update)', async () => {
    const [a, b] = [await p.db.connect(), await p.db.connect()];
    try {
      await a.query('BEGIN');
      await b.query('BEGIN');
      const at = (offset: number) => ({ topic: 'shop-lock-test', partition: 0, offset: String(offset) });
      expect(
        await applyCommand(a, availableDeltaCommand(shop, locationId, [{ barcode: 'A', available_delta: -3 }]), at(1), {
          sideEffects: null,
        }),
      ).toBe('applied');
      const second = applyCommand(b, availableDeltaCommand(shop, locationId, [{ barcode: 'A', available_delta: -4 }]), at(2), {
        sideEffects: null,
      });
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
    const level = await p.db.query(`SELECT available_qty FROM sot.inventory_levels WHERE shop = $1`, [shop]);
    expect(level.rows).toEqual([{ available_qty: 3 }]);
    const logs = await p.db.query(
      `SELECT before_data->>'available_qty' AS before, after_data->>'available_qty' AS after FROM sot.inventory_update_logs
        WHERE shop = $1 AND change_type = 'available_delta' ORDER BY created_at, log_seq`,
      [shop],
    );
    expect(logs.rows).toEqual([
      { before: '10', after: '7' },
      { before: '7', after: '3' },
    ]);
  });
});
