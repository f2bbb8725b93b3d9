import fc from 'fast-check';
import { expect } from 'vitest';
import { withTransaction, type Pool } from '@ingest/db';
import { scratchDatabase } from '@ingest/db/testing';
import { productId, type InventoryCommand, type LocationRef } from '@ingest/domain';
import { projectInventory } from '../src/inventory/projectInventory.ts';

// Test support, imported by the *.equivalence.int.test.ts files of snapshot/, available/ and levels/
// only: the property that holds a kind's set-based SQL to its executable specification, the
// decider. Random command sequences (snapshots, available and levels writes in both modes, repeated
// barcodes, unknown barcodes and locations, locations by external identifier, stale and late as-of
// times, zero crossings, two dates for D16b) go through the decider path in one database, and in
// another through the set-based path for the kind under test (the decider path for the other kinds,
// which so read and build on what that SQL wrote): every reply, every event and every row must be
// identical. Every kind's property draws the same sequences (same arbitraries, same seed).
// PROPERTY_RUNS runs them longer (the bench does).
export const RUNS = Number(process.env['PROPERTY_RUNS'] ?? 12);
export const SEED = 20261123;
/** The test timeout of a property. */
export const PROPERTY_TIMEOUT = Math.max(120_000, RUNS * 2_000);
export const SHOP = 'set-based.example';
export const LOC1 = '01900000-0000-7000-8000-0000000000a1';
const LOC2 = '01900000-0000-7000-8000-0000000000a2';
const KNOWN = ['A', 'B', 'C'];

export interface Databases {
  decider: Pool;
  setBased: Pool;
}

/** Two databases copied from the migrated template for the calling test file, dropped after it. */
export function twoDatabases(prefix: string): Databases {
  const decider = scratchDatabase(`${prefix}_dec`);
  const setBased = scratchDatabase(`${prefix}_set`);
  return {
    get decider() {
      return decider.pool;
    },
    get setBased() {
      return setBased.pool;
    },
  };
}

const TABLES = [
  ['sot.inventory_levels', 'row(shop, product_id, location_id)'],
  ['sot.inventory_daily_snapshots', 'row(shop, product_id, location_id, snapshot_date)'],
  ['sot.inventory_update_logs', 'log_id'],
  ['agent_runtime.idempotency_keys', 'row(shop, idempotency_key)'],
] as const;

export async function rows(pool: Pool): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  for (const [table, key] of TABLES)
    out[table] = (await pool.query<{ r: string }>(`SELECT t::text AS r FROM ${table} t ORDER BY ${key}`)).rows.map((r) => r.r);
  return out;
}

export async function reset(pool: Pool): Promise<void> {
  await pool.query(`TRUNCATE sot.inventory_levels, sot.inventory_daily_snapshots, sot.inventory_update_logs, agent_runtime.idempotency_keys,
                    sot.location_identifiers, sot.locations, public.products`);
  await addShop(pool, SHOP, LOC1, LOC2);
}

/** A second shop for the properties of runs that mix shops: its own products A, B and C, and locations named as the first shop's are. */
export const SHOP2 = 'second.example';
const LOC4 = '01900000-0000-7000-8000-0000000000b1';
const LOC5 = '01900000-0000-7000-8000-0000000000b2';

export async function addSecondShop(pool: Pool): Promise<void> {
  await addShop(pool, SHOP2, LOC4, LOC5);
}

/** A shop's two locations and its known products. */
async function addShop(pool: Pool, shop: string, one: string, two: string): Promise<void> {
  const at = '2026-11-01T00:00:00Z';
  const cmd = '01900000-0000-7000-8000-000000000000';
  await pool.query(
    `INSERT INTO sot.locations (location_id, shop, name, created_at, updated_at, last_command_id) VALUES ($1, $3, 'one', $4, $4, $5), ($2, $3, 'two', $4, $4, $5)`,
    [one, two, shop, at, cmd],
  );
  // 'shared' names both locations: ambiguous; 'store-1' names the first only.
  await pool.query(
    `INSERT INTO sot.location_identifiers (location_id, shop, identifier_type, identifier_value)
     VALUES ($1, $3, 'code', 'store-1'), ($1, $3, 'code', 'shared'), ($2, $3, 'code', 'shared')`,
    [one, two, shop],
  );
  for (const b of KNOWN)
    await pool.query(
      `INSERT INTO public.products (product_id, shop, barcode, product_name, created_at, updated_at, last_command_id) VALUES ($1, $2, $3, $3, $4, $4, $5)`,
      [productId(shop, b), shop, b, at, cmd],
    );
}

/** command() for the second shop: the same body at its own locations. */
export function commandOfSecondShop(b: Body, n: number): InventoryCommand {
  const c = command(JSON.parse(JSON.stringify(b).replaceAll(LOC1, LOC4).replaceAll(LOC2, LOC5)) as Body, n);
  return { ...c, shop: SHOP2 };
}

const barcode = fc.constantFrom('A', 'B', 'C', 'Z');
const qty = fc.constantFrom(0, 1, 2, 5);
const delta = fc.integer({ min: -3, max: 3 });
const location = fc.constantFrom<LocationRef>(
  { location_id: LOC1 },
  { location_id: LOC1 },
  { location_id: LOC2 },
  { location: { identifier_type: 'code', identifier_value: 'store-1' } },
  { location: { identifier_type: 'code', identifier_value: 'shared' } },
  { location_id: '01900000-0000-7000-8000-0000000000ff' },
  // Unresolved until a locations.register of the sequence names it (applyGroup's property).
  { location: { identifier_type: 'code', identifier_value: 'late' } },
);
// A few as-of times, so that later commands are often stale against earlier ones (D15b).
const asOf = fc.constantFrom(
  '2026-11-02T01:00:00.000Z',
  '2026-11-02T02:00:00.000Z',
  '2026-11-02T03:00:00.000Z',
  '2026-11-03T01:00:00.000Z',
);
const optional = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: undefined });
const snapshotLine = fc
  .record({
    barcode,
    on_hand_qty: qty,
    available_qty: optional(qty),
    allocated_qty: optional(qty),
    reserved_qty: optional(qty),
    incoming_qty: optional(qty),
  })
  .map((l) => Object.fromEntries(Object.entries(l).filter(([, v]) => v !== undefined)) as { barcode: string; on_hand_qty: number });

const partialQty = (a: fc.Arbitrary<number>) =>
  fc.record({ on_hand_qty: a, available_qty: a, allocated_qty: a, reserved_qty: a, incoming_qty: a }, { requiredKeys: [] });

export type Body = { kind: InventoryCommand['kind']; asOf: string; key?: string; payload: InventoryCommand['payload'] };
export const body: fc.Arbitrary<Body> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({ location, asOf, lines: fc.array(snapshotLine, { minLength: 1, maxLength: 6 }) }).map((s) => ({
      kind: 'inventory.snapshot' as const,
      asOf: s.asOf,
      // D16: the business date of the as-of (Asia/Tokyo in the default settings; any fixed mapping does here)
      payload: { location: s.location, snapshot_date: s.asOf.slice(0, 10), lines: s.lines },
    })),
  },
  fc
    .record({
      location,
      asOf,
      key: optional(fc.constantFrom('k1', 'k2')),
      lines: fc.array(fc.record({ barcode, available_delta: delta }), { minLength: 1, maxLength: 4 }),
    })
    .map((s) => ({
      kind: 'inventory.available' as const,
      asOf: s.asOf,
      ...(s.key ? { key: s.key } : {}),
      payload: { mode: 'delta' as const, location: s.location, lines: s.lines },
    })),
  fc.record({ location, asOf, lines: fc.array(fc.record({ barcode, available_qty: qty }), { minLength: 1, maxLength: 4 }) }).map((s) => ({
    kind: 'inventory.available' as const,
    asOf: s.asOf,
    payload: { mode: 'absolute' as const, location: s.location, lines: s.lines },
  })),
  fc.boolean().chain((isDelta) =>
    fc
      .record({
        asOf,
        key: optional(fc.constantFrom('k1', 'k3')),
        lines: fc.array(fc.record({ barcode, location, values: partialQty(isDelta ? delta : qty) }), { minLength: 1, maxLength: 4 }),
      })
      .map((s) => ({
        kind: 'inventory.levels' as const,
        asOf: s.asOf,
        ...(isDelta && s.key ? { key: s.key } : {}),
        payload: {
          mode: isDelta ? ('delta' as const) : ('absolute' as const),
          lines: s.lines.map((l) => ({ barcode: l.barcode, location: l.location, ...(isDelta ? { delta: l.values } : { set: l.values }) })),
        },
      })),
  ),
);

export function command(b: Body, n: number): InventoryCommand {
  const ms = Date.parse('2026-11-02T00:00:00Z') + n * 1000;
  const hex = ms.toString(16).padStart(12, '0');
  return {
    command_id: `${hex.slice(0, 8)}-${hex.slice(8)}-7000-8000-${String(n).padStart(12, '0')}`,
    kind: b.kind,
    shop: SHOP,
    received_at: new Date(ms).toISOString(),
    source: { endpoint: '/property' },
    // D28: both actors, so that every log row's actor is compared; not drawn, so the sequences stay the same.
    actor: n % 2 === 0 ? 'platform' : 'key_0123456789abcdef',
    source_system: 'pos',
    inventory_as_of: b.asOf,
    ...(b.key ? { idempotency_key: b.key, payload_hash: JSON.stringify(b.payload) } : {}),
    payload: b.payload,
  } as InventoryCommand;
}

/** The property: for random command sequences, `kind` set-based gives the deciders' replies, events and rows. */
export async function sameAsDeciders(dbs: Databases, kind: InventoryCommand['kind']): Promise<void> {
  await fc.assert(
    fc.asyncProperty(fc.array(body, { minLength: 1, maxLength: 8 }), (bodies) => sequenceSameAsDeciders(dbs, kind, bodies)),
    { numRuns: RUNS, seed: SEED },
  );
}

/** One sequence of the property: from empty tables, `kind` set-based and the deciders give the same replies, events and rows. */
export async function sequenceSameAsDeciders(dbs: Databases, kind: InventoryCommand['kind'], bodies: Body[]): Promise<void> {
  await reset(dbs.decider);
  await reset(dbs.setBased);
  for (const [i, b] of bodies.entries()) {
    const c = command(b, i + 1);
    const expected = await withTransaction(dbs.decider, (tx) => projectInventory(tx, c, { setBased: false }));
    const actual = await withTransaction(dbs.setBased, (tx) => projectInventory(tx, c, { setBased: c.kind === kind }));
    expect(actual.reply, `reply of command ${i + 1} (${c.kind})`).toEqual(expected.reply);
    expect(JSON.stringify(actual.reply.body), 'key order of the stored reply').toBe(JSON.stringify(expected.reply.body));
    expect(actual.events, `events of command ${i + 1}`).toEqual(expected.events);
  }
  expect(await rows(dbs.setBased)).toEqual(await rows(dbs.decider));
}
