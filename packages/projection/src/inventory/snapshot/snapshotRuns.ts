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
 * parked command, or a snapshot an earlier run of the group wrote already) is passed over. After a locations.register its shop's locations are
 * no longer loaded: the register itself is a command the run does not take, so nothing of its shop
 * after it joins. A snapshot whose business date does not follow its as-of time as the run's do
 * does not join either (the statement relies on a level's days never going back, see
 * snapshotRun.ts; they could only if BUSINESS_TIMEZONE changed between two commands).
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
  let lines = 0;
  for (let i = from; i < commands.length; i++) {
    if (!projected(i)) continue;
    const c = commands[i]!;
    if (waiting.has(c.shop)) continue;
    const item = taken(c, run, lines, loaded);
    if (item === null) {
      if (i === from) return run;
      waiting.add(c.shop);
      continue;
    }
    lines += item.c.payload.lines.length;
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
): SnapshotItem | null {
  if (c.kind !== 'inventory.snapshot' || c.payload.lines.length > RUN_COMMAND_MAX_LINES) return null;
  if (run.items.length > 0 && lines + c.payload.lines.length > RUN_MAX_LINES) return null;
  const where = resolveLocation(loaded.get(c.shop)?.get(locationRefKey(c.payload.location)));
  if (!where.ok || !run.items.every((item) => daysFollowTimes(item.c, c))) return null;
  return { c, locationId: where.location_id };
}

/** As-of times and business dates of two snapshots in the same order (an equal time, an equal date). */
export function daysFollowTimes(a: InventorySnapshotCommand, b: InventorySnapshotCommand): boolean {
  const time = Math.sign(Date.parse(a.inventory_as_of) - Date.parse(b.inventory_as_of));
  const day = Math.sign(a.payload.snapshot_date.localeCompare(b.payload.snapshot_date));
  return time === 0 ? day === 0 : day === 0 || day === time;
}
