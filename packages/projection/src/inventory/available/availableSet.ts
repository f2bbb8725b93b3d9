import type { PoolClient } from '@ingest/db';
import {
  availableClamp,
  availableReply,
  inventoryEvents,
  productNotFound,
  QTY_FIELDS,
  staleLine,
  type AvailableClamp,
  type InventoryAvailableCommand,
  type LineTally,
} from '@ingest/domain';
import type { Projection } from '../../projection.ts';
import { writeLevels } from '../store/index.ts';

/**
 * Set-based projection of an inventory-available command (endpoint 5) whose location is
 * resolved and whose barcodes are all different (a repeated barcode makes each line depend on the
 * clamped result of the one before: the decider applies those, D6a). An available write is a levels
 * write of one location that gives only available_qty (absolute, or a delta clamped to 0..QTY_MAX and
 * reported), so it runs the same statement (store/levelWrites.ts: D15b stale absolute lines,
 * narrow writes, a missing level created from zeros, logs, stock events).
 */

/** Whether the set-based statement applies: every line names another barcode (no line depends on another). */
export function linesIndependent(c: InventoryAvailableCommand): boolean {
  return new Set(c.payload.lines.map((l) => l.barcode)).size === c.payload.lines.length;
}

const AVAILABLE = QTY_FIELDS.indexOf('available_qty');

/** Endpoint 5 for a resolved location and distinct barcodes, set-based; the reply and events are built as decideAvailable builds them. */
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
  const t: LineTally<AvailableClamp> = {
    updated: w.updated,
    unchanged: w.unchanged,
    unresolved: [...w.productMissing].sort((a, b) => a - b).map((i) => productNotFound(lines[i]!.barcode)),
    clamped: w.clamped.map((x) => availableClamp(lines[x.line]!.barcode, x.computed, x.set)),
    clampedLines: w.clamped.length,
    stale: w.stale.map((x) => staleLine(lines[x.line]!.barcode, locationId, x.stored_as_of)),
  };
  return {
    reply: availableReply(c, locationId, t),
    events: inventoryEvents(
      c,
      w.updated,
      w.events.map((e) => e.event),
    ),
  };
}
