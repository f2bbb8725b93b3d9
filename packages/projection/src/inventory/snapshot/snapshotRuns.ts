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
 * The snapshots projected one after the other from `from` on, whose locations resolve: the run's
 * statement takes them together (projectSnapshotRun) and gives what they give one by one. A command
 * that is not projected here (a duplicate, or parked behind its shop's parked command) changes no
 * inventory row and does not end the run; any other projected command does, as does a snapshot the
 * set-based statement does not take (its location does not resolve), one of more than
 * RUN_COMMAND_MAX_LINES lines, or one of a shop whose
 * locations are not loaded (a locations.register came before it in the group). A run also ends
 * before a command whose business date does not follow its as-of time as the run's do (the
 * statement relies on a level's days never going back, see snapshotRun.ts; they could only if
 * BUSINESS_TIMEZONE changed between two commands).
 */
export function snapshotRunFrom(
  commands: readonly Command[],
  from: number,
  projected: (i: number) => boolean,
  loaded: ReadonlyMap<string, ReadonlyMap<string, string[]>>,
): SnapshotRun {
  const run: SnapshotRun = { items: [], indexes: [] };
  let lines = 0;
  for (let i = from; i < commands.length; i++) {
    if (!projected(i)) continue;
    const c = commands[i]!;
    if (c.kind !== 'inventory.snapshot' || c.payload.lines.length > RUN_COMMAND_MAX_LINES) break;
    const where = resolveLocation(loaded.get(c.shop)?.get(locationRefKey(c.payload.location)));
    if (!where.ok || (run.items.length > 0 && lines + c.payload.lines.length > RUN_MAX_LINES)) break;
    if (!run.items.every((item) => daysFollowTimes(item.c, c))) break;
    lines += c.payload.lines.length;
    run.items.push({ c, locationId: where.location_id });
    run.indexes.push(i);
  }
  return run;
}

/** As-of times and business dates of two snapshots in the same order (an equal time, an equal date). */
export function daysFollowTimes(a: InventorySnapshotCommand, b: InventorySnapshotCommand): boolean {
  const time = Math.sign(Date.parse(a.inventory_as_of) - Date.parse(b.inventory_as_of));
  const day = Math.sign(a.payload.snapshot_date.localeCompare(b.payload.snapshot_date));
  return time === 0 ? day === 0 : day === 0 || day === time;
}
