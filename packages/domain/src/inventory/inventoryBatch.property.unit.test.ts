import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { OutboxEvent } from '../events.ts';
import { dailyKey } from './dailyBook.ts';
import { decideAvailable } from './decideAvailable.ts';
import { decideLevels } from './decideLevels.ts';
import { decideSnapshot } from './decideSnapshot.ts';
import { LOC, LOC2, PA, PB, dailyRow, level, meta, state, storedDaily } from '../../testing/inventory.ts';
import type { InventoryCommand } from './inventoryCommand.ts';
import { levelKey, QTY_FIELDS, type Level } from './level.ts';
import type { InventoryLog } from './levelBook.ts';
import type { DailyRow, InventoryPlan, InventoryState } from './inventoryState.ts';

// D6a: a batch gives the same rows, counts, logs, events and daily rows (D16b) as its lines sent
// one by one, deltas included.
const barcode = fc.constantFrom('A', 'B', 'Z');
const qty = fc.integer({ min: 0, max: 4 });
const delta = fc.integer({ min: -4, max: 4 });
const loc = fc.constantFrom({ location_id: LOC }, { location_id: LOC2 }, { location_id: 'unknown' });
const partial = (arb: fc.Arbitrary<number>) =>
  fc.record(Object.fromEntries(QTY_FIELDS.map((f) => [f, arb])) as Record<(typeof QTY_FIELDS)[number], fc.Arbitrary<number>>, {
    requiredKeys: [],
  });

const command: fc.Arbitrary<InventoryCommand> = fc.oneof(
  fc.array(fc.record({ barcode, on_hand_qty: qty, available_qty: fc.option(qty, { nil: undefined }) }), { maxLength: 8 }).map((lines) => ({
    ...meta(),
    kind: 'inventory.snapshot' as const,
    payload: {
      location: { location_id: LOC },
      snapshot_date: '2026-11-02',
      lines: lines.map((l) => (l.available_qty === undefined ? { barcode: l.barcode, on_hand_qty: l.on_hand_qty } : l)),
    },
  })),
  fc.array(fc.record({ barcode, available_delta: delta }), { maxLength: 8 }).map((lines) => ({
    ...meta(),
    kind: 'inventory.available' as const,
    payload: { mode: 'delta' as const, location: { location_id: LOC }, lines },
  })),
  fc.array(fc.record({ barcode, available_qty: qty }), { maxLength: 8 }).map((lines) => ({
    ...meta(),
    kind: 'inventory.available' as const,
    payload: { mode: 'absolute' as const, location: { location_id: LOC }, lines },
  })),
  fc.boolean().chain((isDelta) =>
    fc.array(fc.record({ barcode, location: loc, values: partial(isDelta ? delta : qty) }), { maxLength: 8 }).map((lines) => ({
      ...meta(),
      kind: 'inventory.levels' as const,
      payload: {
        mode: isDelta ? ('delta' as const) : ('absolute' as const),
        lines: lines.map((l) => ({ barcode: l.barcode, location: l.location, ...(isDelta ? { delta: l.values } : { set: l.values }) })),
      },
    })),
  ),
);

function decide(s: InventoryState, c: InventoryCommand): InventoryPlan {
  if (c.kind === 'inventory.snapshot') return decideSnapshot(s, c);
  if (c.kind === 'inventory.available') return decideAvailable(s, c);
  return decideLevels(s, c);
}

function single(c: InventoryCommand, i: number, n: number): InventoryCommand {
  const command_id = `01900000-0000-7000-8000-${String(n).padStart(12, '0')}`;
  if (c.kind === 'inventory.levels') return { ...c, command_id, payload: { ...c.payload, lines: [c.payload.lines[i]!] } };
  if (c.kind === 'inventory.available') return { ...c, command_id, payload: { ...c.payload, lines: [c.payload.lines[i]!] } };
  return { ...c, command_id, payload: { ...c.payload, lines: [c.payload.lines[i]!] } };
}

const COUNTS = [
  'lines_processed',
  'lines_upserted',
  'lines_unresolved',
  'logs_written',
  'lines_updated',
  'lines_unchanged',
  'lines_clamped',
  'lines_stale',
];
const LISTS = ['unresolved', 'clamped', 'stale', 'stock_zero'];
const logShape = (l: InventoryLog[]) => l.map(({ log_id: _a, command_id: _b, log_seq: _c, ...rest }) => rest);
const eventShape = (e: OutboxEvent[]) => e.map((x) => ({ ...x.payload, event_id: undefined, command_id: undefined }));
const dailyShape = (r: DailyRow | undefined) => r && { ...r, command_id: undefined };
const dKey = (r: DailyRow) => dailyKey(r.product_id, r.location_id, r.snapshot_date);

describe('inventory deciders, D6a property', () => {
  it('a batch equals its lines applied one by one', () => {
    const initial = [level(PA, 'A', { on_hand_qty: 2, available_qty: 1 }), level(PB, 'B', { available_qty: 0 }, { location_id: LOC2 })];
    const initialDaily = storedDaily([
      dailyRow(PA, 'A', { on_hand_qty: 2, available_qty: 1 }, { inventory_as_of: initial[0]!.last_absolute_as_of! }),
    ]);
    fc.assert(
      fc.property(command, (c) => {
        const batch = decide(state(initial, { daily: initialDaily }), c);

        let levels = new Map<string, Level>(initial.map((l) => [levelKey(l.product_id, l.location_id), l]));
        const daily = new Map(initialDaily);
        const dailyWritten = new Set<string>();
        const logs: InventoryLog[] = [];
        const events: OutboxEvent[] = [];
        const body: Record<string, unknown> = {};
        c.payload.lines.forEach((_, i) => {
          const one = decide(state([...levels.values()], { daily: new Map(daily) }), single(c, i, i + 2));
          levels = new Map(levels);
          for (const l of one.levels) levels.set(levelKey(l.product_id, l.location_id), l);
          for (const r of one.daily) {
            daily.set(dKey(r), r);
            dailyWritten.add(dKey(r));
          }
          logs.push(...one.logs);
          events.push(...one.events);
          const b = one.reply.body;
          for (const k of COUNTS) if (k in b) body[k] = ((body[k] as number) ?? 0) + (b[k] as number);
          for (const k of LISTS) if (k in b) body[k] = [...((body[k] as unknown[]) ?? []), ...(b[k] as unknown[])];
        });

        const b = batch.reply.body;
        for (const k of [...COUNTS, ...LISTS]) if (k in b && c.payload.lines.length) expect(b[k], k).toEqual(body[k]);
        expect(logShape(batch.logs)).toEqual(logShape(logs));
        expect(eventShape(batch.events)).toEqual(eventShape(events));
        for (const l of batch.levels) expect(levels.get(levelKey(l.product_id, l.location_id))).toEqual(l);
        // The same daily rows are written, with the same values (each single line is its own command).
        expect(batch.daily.map(dKey).sort()).toEqual([...dailyWritten].sort());
        for (const r of batch.daily) expect(dailyShape(daily.get(dKey(r)))).toEqual(dailyShape(r));
      }),
      { numRuns: 400 },
    );
  });
});
