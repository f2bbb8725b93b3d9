import type { PoolClient } from '@ingest/db';
import {
  inventoryEvents,
  levelsClamp,
  levelsReply,
  locationNotResolved,
  productNotFound,
  QTY_FIELDS,
  staleLine,
  stockZeroLine,
  type InventoryLevelsCommand,
  type LevelsClamp,
  type LineTally,
  type Resolution,
} from '@ingest/domain';
import type { Projection } from '../../projection.ts';
import { writeLevels } from '../store/index.ts';

/** Whether the set-based statement applies: no two resolved lines name the same (barcode, location). */
export function levelLinesIndependent(c: InventoryLevelsCommand, where: Resolution[]): boolean {
  const pairs = new Set<string>();
  let resolved = 0;
  c.payload.lines.forEach((l, i) => {
    const w = where[i]!;
    if (!w.ok) return;
    resolved++;
    pairs.add(`${l.barcode}\0${w.location_id}`);
  });
  return pairs.size === resolved;
}

/** Endpoint 3 for lines with distinct (barcode, location), set-based; the reply and events are built as decideLevels builds them. */
export async function projectLevelsSet(tx: PoolClient, c: InventoryLevelsCommand, where: Resolution[]): Promise<Projection> {
  const delta = c.payload.mode === 'delta';
  const lines = c.payload.lines;
  const locations = where.map((r) => (r.ok ? r.location_id : null));
  // The statement only applies lines whose location resolved: those of its outcomes (clamped, stale, events) have one.
  const locationOf = (line: number): string => locations[line]!;
  const w = await writeLevels(
    tx,
    c,
    lines.map((l, i) => ({
      barcode: l.barcode,
      location_id: locations[i] ?? null,
      values: QTY_FIELDS.map((f) => (delta ? l.delta?.[f] : l.set?.[f]) ?? null),
    })),
    delta ? 'levels_delta' : 'levels_set',
  );
  const t: LineTally<LevelsClamp> = {
    updated: w.updated,
    unchanged: w.unchanged,
    // In line order, the lines whose location did not resolve among those whose product did not.
    unresolved: lines.flatMap((l, i) => {
      const r = where[i]!;
      if (!r.ok) return [locationNotResolved(l.barcode, l.location, r.reason)];
      return w.productMissing.has(i) ? [productNotFound(l.barcode, r.location_id)] : [];
    }),
    clamped: w.clamped.map((x) => levelsClamp(lines[x.line]!.barcode, locationOf(x.line), x.field, x.computed, x.set)),
    clampedLines: new Set(w.clamped.map((x) => x.line)).size,
    stale: w.stale.map((x) => staleLine(lines[x.line]!.barcode, locationOf(x.line), x.stored_as_of)),
  };
  const stockZero = w.events.filter((e) => e.kind === 'stock_zero').map((e) => stockZeroLine(lines[e.line]!.barcode, locationOf(e.line)));
  return {
    reply: levelsReply(c, t, stockZero),
    events: inventoryEvents(
      c,
      w.updated,
      w.events.map((e) => e.event),
    ),
  };
}
