import { locationRefKey, resolveLocation, type Command, type InventorySnapshotCommand } from '@ingest/domain';
import type { SnapshotItem } from './snapshotRun.ts';

/**
 * The most lines a command of a run has: larger snapshots cost less in a statement of their own
 * (snapshotRun.ts says what was measured).
 */
export const RUN_COMMAND_MAX_LINES = 250;

/**
 * The most lines one statement of a run takes: a replay batch holds hundreds of commands, and past
 * this many lines a run goes on in a further statement, so that its sorts and hash tables stay
 * small (the measured gains were for runs of 1,600 and 3,200 lines).
 */
export const RUN_MAX_LINES = 4_000;

/** A run of snapshots for one statement: the commands with their locations, and where they stand in the group. */
export interface SnapshotRun {
  items: SnapshotItem[];
  indexes: number[];
}

/**
 * The run of snapshots from `from` on that the run's statement takes together (projectSnapshotRun)
 * and that gives what they give one by one: snapshots whose locations resolve, of at most
 * RUN_COMMAND_MAX_LINES lines, in log order. Commands of different shops touch different rows (every
 * row is a shop's, D3), so a shop's snapshots join the run until a command of THAT shop that the run
 * does not take (another kind, a snapshot it cannot take, or one past RUN_MAX_LINES): from there on
 * the shop's commands wait for their turn, in order, while other shops' snapshots may still join.
 * A command that is not projected here (`projected` false: a duplicate, parked behind its shop's
 * parked command, or a snapshot an earlier run of the group wrote already) is passed over. After a
 * locations.register its shop's locations are no longer loaded: the register itself is a command
 * the run does not take, so nothing of its shop after it joins. A snapshot whose business date does
 * not follow its as-of time as the run's do does not join either (DayOrder; the statement relies on
 * a level's days never going back, see snapshotRun.ts; they could only if BUSINESS_TIMEZONE changed
 * between two commands).
 */
export function snapshotRunFrom(
  commands: readonly Command[],
  from: number,
  projected: (i: number) => boolean,
  loaded: ReadonlyMap<string, ReadonlyMap<string, string[]>>,
): SnapshotRun {
  const run: SnapshotRun = { items: [], indexes: [] };
  // Shops with a command the run does not take: their later commands keep their turn.
  const waiting = new Set<string>();
  const days = new DayOrder();
  let lines = 0;
  for (let i = from; i < commands.length; i++) {
    if (!projected(i)) continue;
    const c = commands[i]!;
    if (waiting.has(c.shop)) continue;
    const item = taken(c, run, lines, loaded, days);
    if (item === null) {
      if (i === from) return run;
      waiting.add(c.shop);
      continue;
    }
    lines += item.c.payload.lines.length;
    days.add(item.c);
    run.items.push(item);
    run.indexes.push(i);
  }
  return run;
}

/** The command as the run's next snapshot with its location, or null when the run cannot take it. */
function taken(
  c: Command,
  run: SnapshotRun,
  lines: number,
  loaded: ReadonlyMap<string, ReadonlyMap<string, string[]>>,
  days: DayOrder,
): SnapshotItem | null {
  if (c.kind !== 'inventory.snapshot' || c.payload.lines.length > RUN_COMMAND_MAX_LINES) return null;
  if (run.items.length > 0 && lines + c.payload.lines.length > RUN_MAX_LINES) return null;
  const where = resolveLocation(loaded.get(c.shop)?.get(locationRefKey(c.payload.location)));
  if (!where.ok || !days.fits(c)) return null;
  return { c, locationId: where.location_id };
}

/**
 * The snapshots of a run, whose business dates follow their as-of times: of any two, the later as-of
 * time has the same or a later date, and an equal time the same date. Kept as each date's earliest
 * and latest as-of time, so a snapshot is checked against the dates (one or two in practice), not
 * against every snapshot of the run: a pairwise check cost 85 ms for a run of 500 one-line
 * snapshots, 2.3 s for 4,000.
 */
export class DayOrder {
  readonly #times = new Map<string, { first: number; last: number }>();

  /** Whether `c` keeps the order: every earlier date's times before its own, every later date's after. */
  fits(c: InventorySnapshotCommand): boolean {
    const time = Date.parse(c.inventory_as_of);
    const day = c.payload.snapshot_date;
    for (const [d, { first, last }] of this.#times) if ((d < day && last >= time) || (d > day && first <= time)) return false;
    return true;
  }

  add(c: InventorySnapshotCommand): void {
    const time = Date.parse(c.inventory_as_of);
    const t = this.#times.get(c.payload.snapshot_date);
    if (t) {
      t.first = Math.min(t.first, time);
      t.last = Math.max(t.last, time);
    } else this.#times.set(c.payload.snapshot_date, { first: time, last: time });
  }
}
