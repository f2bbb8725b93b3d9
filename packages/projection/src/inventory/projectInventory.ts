import { idempotencyKeys, type PoolClient } from '@ingest/db';
import {
  decideAvailable,
  decideLevels,
  decideSnapshot,
  inventoryEvents,
  resolveLocation,
  locationRefKey,
  levelKey,
  QTY_FIELDS,
  type InventoryCommand,
  type InventoryAvailableCommand,
  type InventoryLevelsCommand,
  type Level,
  type InventoryPlan,
  type InventoryState,
  type LocationRef,
} from '@ingest/domain';
import type { Projection } from '../projection.ts';
import { linesIndependent, projectAvailableSet } from './available/index.ts';
import { levelLinesIndependent, projectLevelsSet } from './levels/index.ts';
import { projectSnapshotSet } from './snapshot/index.ts';
import {
  insertInventoryLogs,
  loadDailyRows,
  loadLevels,
  loadLocationMatches,
  loadProductIds,
  stampLevels,
  upsertDailyRows,
  upsertLevels,
} from './store/index.ts';

/** The location refs of an inventory command (applyGroup loads them for a whole group). */
export function refsOf(c: InventoryCommand): LocationRef[] {
  return c.kind === 'inventory.levels' ? c.payload.lines.map((l) => l.location) : [c.payload.location];
}

export interface InventoryPath {
  /**
   * On (docs/architecture.md "Set-based inventory projection"): snapshots and available writes
   * whose location resolves, and levels writes, are projected set-based (snapshot/, available/,
   * levels/) unless a line depends on an earlier one of the same level. Off, every command takes
   * load -> decide -> apply with the deciders: each kind's equivalence property runs both.
   */
  setBased: boolean;
}

/**
 * load -> decide -> apply for endpoints 3, 4 and 5; a handful of statements whatever the line count.
 * `loaded`: the shop's location matches of (at least) this command's refs, loaded already by its group.
 */
export async function projectInventory(
  tx: PoolClient,
  c: InventoryCommand,
  path: InventoryPath = { setBased: true },
  loaded?: ReadonlyMap<string, string[]>,
): Promise<Projection> {
  const refs = refsOf(c);
  // One client runs one statement at a time: sequential awaits, not Promise.all.
  const locations = loaded ?? (await loadLocationMatches(tx, c.shop, refs));
  if (path.setBased && c.kind === 'inventory.snapshot') {
    const where = resolveLocation(locations.get(locationRefKey(c.payload.location)));
    if (where.ok) return projectSnapshotSet(tx, c, where.location_id);
  }
  if (path.setBased && c.kind === 'inventory.available' && linesIndependent(c)) {
    const where = resolveLocation(locations.get(locationRefKey(c.payload.location)));
    const projection = where.ok ? await withDeltaKey(tx, c, () => projectAvailableSet(tx, c, where.location_id)) : null;
    if (projection) return projection;
  }
  if (path.setBased && c.kind === 'inventory.levels') {
    const where = c.payload.lines.map((l) => resolveLocation(locations.get(locationRefKey(l.location))));
    const projection = levelLinesIndependent(c, where) ? await withDeltaKey(tx, c, () => projectLevelsSet(tx, c, where)) : null;
    if (projection) return projection;
  }
  const barcodes = [...new Set<string>(c.payload.lines.map((l) => l.barcode))];
  const products = await loadProductIds(tx, c.shop, barcodes);
  const locationIds = [
    ...new Set(
      refs.flatMap((r) => {
        const res = resolveLocation(locations.get(locationRefKey(r)));
        return res.ok ? [res.location_id] : [];
      }),
    ),
  ];
  const isDelta = c.kind !== 'inventory.snapshot' && c.payload.mode === 'delta';
  const productIds = [...new Set(products.values())];
  const state: InventoryState = {
    products,
    locations,
    levels: await loadLevels(tx, c.shop, productIds, locationIds),
    // D16b: the snapshot compares its day's rows with the stored ones; the other kinds write none.
    daily: c.kind === 'inventory.snapshot' ? await loadDailyRows(tx, c.shop, c.payload.snapshot_date, productIds, locationIds) : new Map(),
    appliedKey: isDelta && c.idempotency_key ? await idempotencyKeys.find(tx, c.shop, c.idempotency_key) : null,
  };

  const plan = decide(state, c);
  const { rewritten, stamped } = splitByContent(plan.levels, state.levels);
  await upsertLevels(tx, rewritten, c.command_id);
  await stampLevels(tx, c.shop, stamped, c.command_id);
  await insertInventoryLogs(tx, plan.logs, c.actor);
  await upsertDailyRows(tx, plan.daily);
  if (plan.recordKey) await idempotencyKeys.record(tx, c.shop, plan.recordKey, c.command_id, c.received_at);
  return {
    reply: plan.reply,
    events: inventoryEvents(c, plan.logs.length, plan.events),
  };
}

/**
 * D19 around a set-based delta: a key applied already leaves the command to the decider (null: it
 * changes nothing and says so); otherwise the write, then its key recorded in the same transaction.
 */
async function withDeltaKey(
  tx: PoolClient,
  c: InventoryAvailableCommand | InventoryLevelsCommand,
  write: () => Promise<Projection>,
): Promise<Projection | null> {
  const key = c.payload.mode === 'delta' ? c.idempotency_key : undefined;
  if (key && (await idempotencyKeys.find(tx, c.shop, key))) return null;
  const projection = await write();
  if (key)
    await idempotencyKeys.record(tx, c.shop, { idempotency_key: key, payload_hash: c.payload_hash ?? '' }, c.command_id, c.received_at);
  return projection;
}

/** Levels whose quantities and event seq are as loaded only move their D15b stamp (narrow writes). */
function splitByContent(levels: Level[], loaded: ReadonlyMap<string, Level>): { rewritten: Level[]; stamped: Level[] } {
  const rewritten: Level[] = [];
  const stamped: Level[] = [];
  for (const l of levels) {
    const before = loaded.get(levelKey(l.product_id, l.location_id));
    const same = before !== undefined && before.stock_event_seq === l.stock_event_seq && QTY_FIELDS.every((f) => before[f] === l[f]);
    (same ? stamped : rewritten).push(l);
  }
  return { rewritten, stamped };
}

function decide(state: InventoryState, c: InventoryCommand): InventoryPlan {
  switch (c.kind) {
    case 'inventory.snapshot':
      return decideSnapshot(state, c);
    case 'inventory.available':
      return decideAvailable(state, c);
    case 'inventory.levels':
      return decideLevels(state, c);
  }
}
