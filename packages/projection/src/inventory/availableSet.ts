import type { PoolClient } from '@ingest/db';
import { auditBatch, newTally, QTY_FIELDS, tallyBody, type InventoryAvailableCommand } from '@ingest/domain';
import type { Projection } from '../projection.ts';
import { writeLevels } from './levelsSet.ts';

/**
 * Set-based projection of an inventory-available command (endpoint 5) whose location is
 * resolved and whose barcodes are all different (a repeated barcode makes each line depend on the
 * clamped result of the one before: the decider applies those, D6a). An available write is a levels
 * write of one location that gives only available_qty (absolute, or a delta clamped to 0..QTY_MAX and
 * reported), so it runs the same statement (levelsSet.ts LEVELS_SQL: D15b stale absolute lines,
 * narrow writes, a missing level created from zeros, logs, stock events). decideAvailable is the
 * specification: the property test of tests/integration/set-based-projection.int.test.ts compares them.
 */

/** Whether the set-based statement applies: every line names another barcode (no line depends on another). */
export function linesIndependent(c: InventoryAvailableCommand): boolean {
  return new Set(c.payload.lines.map((l) => l.barcode)).size === c.payload.lines.length;
}

const AVAILABLE = QTY_FIELDS.indexOf('available_qty');

/** Endpoint 5 for a resolved location and distinct barcodes, set-based; the reply and events are decideAvailable's. */
export async function projectAvailableSet(tx: PoolClient, c: InventoryAvailableCommand, locationId: string): Promise<Projection> {
  const delta = c.payload.mode === 'delta';
  const lines = c.payload.lines;
  const w = await writeLevels(
    tx,
    c,
    lines.map((l) => ({
      barcode: l.barcode,
      location_id: locationId,
      values: QTY_FIELDS.map((_, k) => (k === AVAILABLE ? ('available_delta' in l ? l.available_delta : l.available_qty) : null)),
    })),
    delta ? 'available_delta' : 'available_set',
  );
  const t = newTally();
  t.updated = w.updated;
  t.unchanged = w.unchanged;
  t.unresolved = [...w.productMissing].sort((a, b) => a - b).map((i) => ({ barcode: lines[i]!.barcode, reason: 'product_not_found' }));
  t.clamped = w.clamped.map((x) => ({ barcode: lines[x.line]!.barcode, computed: x.computed, set: x.set }));
  t.clampedLines = w.clamped.length;
  t.stale = w.stale.map((x) => ({ barcode: lines[x.line]!.barcode, location_id: locationId, stored_as_of: x.stored_as_of }));
  const base = { ok: true, mode: c.payload.mode, shop: c.shop, location_id: locationId, lines_processed: lines.length };
  return {
    reply: { status: 200, body: tallyBody(base, t) },
    events: [...(w.updated > 0 ? [auditBatch('inventory_update_logs', c.command_id, c.shop)] : []), ...w.events.map((e) => e.event)],
  };
}
