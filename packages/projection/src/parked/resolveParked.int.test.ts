import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SchemaRegistry } from '@ingest/contracts';
import { parkedCommands } from '@ingest/db';
import { retryParked, skipParked } from './resolveParked.ts';
import { scratchDatabase } from '@ingest/db/testing';

// D2 through an operator's retry: a shop's parked commands are applied in log order, that is by
// (partition, offset) as numbers. Offsets whose decimal digits differ in number (9 and 10, 99 and
// 100) sort the other way round as text.
const TOPIC = 'resolve-parked.commands';
const TOPICS = { commands: TOPIC, audit: 'audit', stockZero: 'stock-zero', stockRestored: 'stock-restored' };

const db = scratchDatabase('proj_parked', 2);

const deps = () => ({ pool: db.pool, schemas: new SchemaRegistry(), topics: TOPICS });
let n = 0;

/** Parks a command of `shop` at `offset` of partition 0 (the first one failed, the others behind it); returns its id. */
async function parkAt(shop: string, offset: number, kind: string, payload: unknown, behind: string | null): Promise<string> {
  n++;
  const ms = Date.parse('2026-11-02T00:00:00Z') + n * 1000;
  const hex = ms.toString(16).padStart(12, '0');
  const command_id = `${hex.slice(0, 8)}-${hex.slice(8)}-7000-8000-${String(n).padStart(12, '0')}`;
  const envelope = { command_id, kind, shop, received_at: new Date(ms).toISOString(), source: { endpoint: '/test' }, payload };
  await parkedCommands.park(db.pool, {
    command_id,
    shop,
    kind,
    at: { topic: TOPIC, partition: 0, offset: String(offset) },
    message: Buffer.from(JSON.stringify(envelope)),
    error: behind ? `waiting behind parked command ${behind}` : 'failed',
    attempts: behind ? 0 : 3,
    behind,
  });
  return command_id;
}

const product = (name: string) => ({ response: 'ingest', items: [{ product: { barcode: 'B1', product_name: name } }] });
const POISON = { snapshot_date: '0000-01-01' }; // well-formed, but PostgreSQL cannot store the date

describe('resolving parked commands (D2: in log order)', () => {
  it('a retry takes the head first when the command behind it sits at an offset with one digit more (9, then 10)', async () => {
    const shop = `parked-${randomUUID().slice(0, 6)}.example`;
    const poison = await parkAt(shop, 9, 'inventory.daily_snapshot', POISON, null);
    const behind = await parkAt(shop, 10, 'products.upsert', product('behind'), poison);

    const again = await retryParked(deps(), poison, { actor: 'platform' });
    expect(again).toMatchObject({ applied: [], failed: { command_id: poison }, remaining: 2 });
    expect(await parkedCommands.shopOfOpen(db.pool, behind)).toBe(shop);
  });

  it('a retry applies the commands behind a skipped head by their offsets as numbers (98, 99, 100, 1000)', async () => {
    const shop = `parked-${randomUUID().slice(0, 6)}.example`;
    const poison = await parkAt(shop, 97, 'inventory.daily_snapshot', POISON, null);
    const behind: string[] = [];
    for (const offset of [98, 99, 100, 1000]) behind.push(await parkAt(shop, offset, 'products.upsert', product(`at ${offset}`), poison));

    const skipped = await skipParked(deps(), poison, { actor: 'platform', reason: 'bad date' });
    expect(skipped).toMatchObject({ applied: behind, failed: null, remaining: 0 });
    const { rows } = await db.pool.query(`SELECT product_name FROM public.products WHERE shop = $1 AND barcode = 'B1'`, [shop]);
    expect(rows).toEqual([{ product_name: 'at 1000' }]);
  });
});
