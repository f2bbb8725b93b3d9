import { beforeAll, describe, expect, it } from 'vitest';
import { SchemaRegistry } from '@ingest/contracts';
import { withTransaction } from '@ingest/db';
import { validOrderRow } from '@ingest/domain/testing';
import { applyCommand } from './applyCommand.ts';
import { createCommandDecoder } from './decodeCommand.ts';
import { scratchDatabase } from '@ingest/db/testing';

// D28, who wrote what: every kind that writes an update log records its command's actor in each
// record, and the agent_read views show it. The commands go in as messages of the log (decoded as
// the projector decodes them, so one without actor is the log before D28) and through applyCommand:
// both inventory paths (set-based, and the deciders for a barcode repeated in one command), and the
// stock events the writes emit.
const SHOP = 'actor.example';
const KEY = 'key_0123456789abcdef';
const LOC = '01900000-0000-7000-8000-0000000000a1';
const CH = '01900000-0000-7000-8000-0000000000c1';
const TOPICS = { commands: 'c', audit: 'audit', stockZero: 'stock-zero', stockRestored: 'stock-restored' };
const LOG_VIEWS = ['product_update_logs', 'inventory_update_logs', 'order_line_master_update_logs'] as const;

const db = scratchDatabase('proj_actor', 2);

const decode = createCommandDecoder(new SchemaRegistry());
let n = 0;

/** Appends-and-applies one envelope (no actor field when `actor` is undefined); returns its command id. */
async function apply(kind: string, payload: unknown, actor: string | undefined, endpoint = '/test'): Promise<string> {
  n++;
  const ms = Date.parse('2026-11-02T00:00:00Z') + n * 1000;
  const hex = ms.toString(16).padStart(12, '0');
  const at = new Date(ms).toISOString();
  const envelope = {
    command_id: `${hex.slice(0, 8)}-${hex.slice(8)}-7000-8000-${String(n).padStart(12, '0')}`,
    kind,
    shop: SHOP,
    received_at: at,
    source: { endpoint },
    ...(actor === undefined ? {} : { actor }),
    ...(kind.startsWith('inventory.') ? { source_system: 'wms', inventory_as_of: at } : {}),
    payload,
  };
  const decoded = decode(Buffer.from(JSON.stringify(envelope)));
  if (!decoded.ok) throw new Error(decoded.error);
  const outcome = await withTransaction(db.pool, (tx) =>
    applyCommand(tx, decoded.command, { topic: 'c', partition: 0, offset: String(n) }, { sideEffects: { topics: TOPICS } }),
  );
  expect(outcome).toBe('applied');
  return envelope.command_id;
}

/** Every log-writing kind once, each command changing what the round before left, so that each writes records. */
async function writes(round: number, actor: string | undefined) {
  const onHand = 5 + round;
  const location = { location_id: LOC };
  return {
    products: await apply(
      'products.upsert',
      { response: 'ingest', items: ['A', 'B'].map((barcode) => ({ product: { barcode, product_name: `${barcode} ${round}` } })) },
      actor,
    ),
    snapshot: await apply(
      'inventory.snapshot',
      {
        location,
        snapshot_date: '2026-11-02',
        lines: [
          { barcode: 'A', on_hand_qty: onHand },
          { barcode: 'B', on_hand_qty: onHand },
        ],
      },
      actor,
    ),
    // set-based: A goes to 0 (stock_zero)
    availableSet: await apply(
      'inventory.available',
      { mode: 'delta', location, lines: [{ barcode: 'A', available_delta: -onHand }] },
      actor,
    ),
    // a barcode repeated in one command: the decider path (projectInventory)
    availableDecider: await apply(
      'inventory.available',
      {
        mode: 'delta',
        location,
        lines: [
          { barcode: 'B', available_delta: -1 },
          { barcode: 'B', available_delta: -1 },
        ],
      },
      actor,
    ),
    // A back above 0 (stock_restored)
    levels: await apply('inventory.levels', { mode: 'absolute', lines: [{ barcode: 'A', location, set: { available_qty: 2 } }] }, actor),
    orderLines: await apply(
      'order_lines.upsert',
      {
        rows: [validOrderRow({ barcode: 'A', channel_id: CH, location_id: LOC }, { transaction_id: `T-${round}` })],
        dry_run: false,
        change_source: 'external_app',
        ingest_run_id: null,
        idempotency_key: null,
        changed_by_user_id: null,
        unknown_fields: 'reject',
      },
      actor,
    ),
  };
}

/** command_id -> the actors of its records, per log as agent_reader reads it through agent_read, and as stored. */
async function actorsByCommand(): Promise<{ views: Map<string, string[]>; tables: Map<string, string[]> }> {
  const collect = (rows: Array<{ command_id: string; actor: string }>, into: Map<string, string[]>) => {
    for (const r of rows) into.set(r.command_id, [...(into.get(r.command_id) ?? []), r.actor]);
  };
  const views = new Map<string, string[]>();
  const tables = new Map<string, string[]>();
  await withTransaction(db.pool, async (tx) => {
    await tx.query('SET LOCAL ROLE agent_reader');
    for (const v of LOG_VIEWS)
      collect((await tx.query(`SELECT command_id, actor FROM agent_read.${v} WHERE shop = $1 ORDER BY log_seq`, [SHOP])).rows, views);
  });
  for (const t of ['public.product_update_logs', 'sot.inventory_update_logs', 'public.order_line_master_update_logs'])
    collect((await db.pool.query(`SELECT command_id, actor FROM ${t} WHERE shop = $1 ORDER BY log_seq`, [SHOP])).rows, tables);
  return { views, tables };
}

describe('the actor of every update-log record (D28)', () => {
  let keyed: Awaited<ReturnType<typeof writes>>;
  let platform: Awaited<ReturnType<typeof writes>>;

  beforeAll(async () => {
    await apply('locations.register', { locations: [{ location_id: LOC, name: 'Store', identifiers: [] }] }, undefined);
    await apply('channels.register', { channels: [{ channel_id: CH, name: 'Online' }] }, undefined);
    keyed = await writes(1, KEY);
    platform = await writes(2, undefined);
  });

  it("a shop key's command writes its key id in every record of every log, and the agent_read views show it", async () => {
    const { views, tables } = await actorsByCommand();
    for (const [kind, id] of Object.entries(keyed)) {
      expect(tables.get(id)?.length, `${kind} wrote records`).toBeGreaterThan(0);
      expect(new Set(tables.get(id)), kind).toEqual(new Set([KEY]));
      expect(views.get(id), kind).toEqual(tables.get(id));
    }
  });

  it('a command without actor (the log before D28) writes platform', async () => {
    const { views, tables } = await actorsByCommand();
    for (const [kind, id] of Object.entries(platform)) {
      expect(tables.get(id)?.length, `${kind} wrote records`).toBeGreaterThan(0);
      expect(new Set(tables.get(id)), kind).toEqual(new Set(['platform']));
      expect(views.get(id), kind).toEqual(tables.get(id));
    }
  });

  it('the stock events of a write name its actor in ce_actor, as stored in the outbox', async () => {
    const { rows } = await db.pool.query<{ command_id: string; topic: string; actor: string }>(
      `SELECT command_id, topic, headers->>'ce_actor' AS actor FROM agent_runtime.outbox
        WHERE command_id = ANY($1::uuid[]) AND topic <> 'audit' ORDER BY id`,
      [[keyed.availableSet, keyed.levels, platform.availableSet, platform.levels]],
    );
    expect(rows).toEqual([
      { command_id: keyed.availableSet, topic: 'stock-zero', actor: KEY },
      { command_id: keyed.levels, topic: 'stock-restored', actor: KEY },
      { command_id: platform.availableSet, topic: 'stock-zero', actor: 'platform' },
      { command_id: platform.levels, topic: 'stock-restored', actor: 'platform' },
    ]);
  });
});
