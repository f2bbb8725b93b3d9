import { describe, expect, it } from 'vitest';
import { locationRefKey, type Command, type InventorySnapshotCommand } from '@ingest/domain';
import { DayOrder, RUN_COMMAND_MAX_LINES, RUN_MAX_LINES, snapshotRunFrom } from './snapshotRuns.ts';

const LOC = '01900000-0000-7000-8000-0000000000a1';
const ref = { location_id: LOC };

function snapshot(shop: string, lines: number, location: InventorySnapshotCommand['payload']['location'] = ref): Command {
  return {
    command_id: `01900000-0000-7000-8000-${String(lines).padStart(12, '0')}`,
    kind: 'inventory.snapshot',
    shop,
    received_at: '2026-11-02T00:00:00.000Z',
    source: { endpoint: '/property' },
    actor: 'platform',
    source_system: 'pos',
    inventory_as_of: '2026-11-02T00:00:00.000Z',
    payload: {
      location,
      snapshot_date: '2026-11-02',
      lines: Array.from({ length: lines }, (_, i) => ({ barcode: `b${i}`, on_hand_qty: 1 })),
    },
  };
}
const other = { ...snapshot('a', 1), kind: 'inventory.available' } as unknown as Command;
const loaded = new Map([
  ['a', new Map([[locationRefKey(ref), [LOC]]])],
  ['b', new Map([[locationRefKey(ref), [LOC]]])],
]);
const all = () => true;

describe('snapshotRunFrom', () => {
  it('takes snapshots of any shop whose locations resolve, each shop until a command of its own it does not take', () => {
    const commands = [snapshot('a', 1), snapshot('b', 2), snapshot('a', 3), other, snapshot('a', 4), snapshot('b', 5)];
    const run = snapshotRunFrom(commands, 0, all, loaded);
    // shop a waits from `other` on (a's 4 keeps its turn after it); shop b goes on
    expect(run.indexes).toEqual([0, 1, 2, 5]);
    expect(run.items.map((i) => i.locationId)).toEqual([LOC, LOC, LOC, LOC]);
    expect(snapshotRunFrom(commands, 3, all, loaded).indexes).toEqual([]);
    expect(snapshotRunFrom(commands, 4, all, loaded).indexes).toEqual([4, 5]);
  });

  it('passes over commands not projected here (duplicates, parked) without ending the run', () => {
    const commands = [snapshot('a', 1), other, snapshot('a', 3)];
    expect(snapshotRunFrom(commands, 0, (i) => i !== 1, loaded).indexes).toEqual([0, 2]);
  });

  it('a snapshot whose location does not resolve, or whose shop has no loaded locations, holds its shop back', () => {
    const unresolved = snapshot('a', 2, { location: { identifier_type: 'code', identifier_value: 'nowhere' } });
    expect(snapshotRunFrom([snapshot('a', 1), unresolved, snapshot('a', 3), snapshot('b', 4)], 0, all, loaded).indexes).toEqual([0, 3]);
    expect(snapshotRunFrom([snapshot('a', 1), snapshot('c', 2), snapshot('c', 3)], 0, all, loaded).indexes).toEqual([0]);
    expect(snapshotRunFrom([unresolved, snapshot('b', 4)], 0, all, loaded).indexes).toEqual([]);
  });

  it('goes on in a further statement past RUN_MAX_LINES lines, and leaves commands of more than RUN_COMMAND_MAX_LINES alone', () => {
    const most = Math.floor(RUN_MAX_LINES / RUN_COMMAND_MAX_LINES);
    const commands = [
      ...Array.from({ length: most + 1 }, () => snapshot('a', RUN_COMMAND_MAX_LINES)),
      snapshot('a', RUN_COMMAND_MAX_LINES + 1),
    ];
    expect(snapshotRunFrom(commands, 0, all, loaded).indexes).toHaveLength(most);
    expect(snapshotRunFrom(commands, most, all, loaded).indexes).toEqual([most]);
    expect(snapshotRunFrom(commands, most + 1, all, loaded).indexes).toEqual([]);
  });

  it('ends before a command whose business date goes against its as-of time', () => {
    const at = (asOf: string, day: string) => {
      const c = snapshot('a', 1) as InventorySnapshotCommand;
      return { ...c, inventory_as_of: asOf, payload: { ...c.payload, snapshot_date: day } } as InventorySnapshotCommand;
    };
    const after = (run: InventorySnapshotCommand[], next: InventorySnapshotCommand) => {
      const days = new DayOrder();
      run.forEach((c) => days.add(c));
      return days.fits(next);
    };
    const early = at('2026-11-02T10:00:00.000Z', '2026-11-02');
    expect(after([early], at('2026-11-02T11:00:00.000Z', '2026-11-02'))).toBe(true);
    expect(after([early], at('2026-11-03T11:00:00.000Z', '2026-11-03'))).toBe(true);
    expect(after([early], at('2026-11-01T11:00:00.000Z', '2026-11-01'))).toBe(true);
    // another business time zone: later, yet a day earlier; or the same instant on another day
    expect(after([early], at('2026-11-02T11:00:00.000Z', '2026-11-01'))).toBe(false);
    expect(after([early], at('2026-11-02T10:00:00.000Z', '2026-11-03'))).toBe(false);
    // against every snapshot of the run, not only the last: between the two days' times, on either day
    const late = at('2026-11-03T12:00:00.000Z', '2026-11-03');
    expect(after([early, late], at('2026-11-02T11:00:00.000Z', '2026-11-02'))).toBe(true);
    expect(after([late, early], at('2026-11-03T11:00:00.000Z', '2026-11-03'))).toBe(true);
    expect(after([early, late], at('2026-11-03T13:00:00.000Z', '2026-11-02'))).toBe(false);
    expect(after([early, late], at('2026-11-02T09:00:00.000Z', '2026-11-03'))).toBe(false);
    expect(snapshotRunFrom([early, at('2026-11-02T11:00:00.000Z', '2026-11-01')], 0, all, loaded).indexes).toEqual([0]);
  });
});
