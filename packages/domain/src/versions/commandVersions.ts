import type { Command } from '../commands.ts';

/**
 * The version of the command schemas the gateway writes today: `schemas/commands/*.json`, released
 * unchanged as `schemas/commands/v<COMMAND_VERSION>/` (docs/replay.md#command-versions). Each command
 * carries the version it was written in (`v`), and a replay reads it with that version's schemas for
 * ever (D26).
 */
export const COMMAND_VERSION = 1;

/** A command as its writer appends it (the gateway, the daily scheduler): with the version it is written in. */
export type CommandRecord<C extends Command = Command> = C & { v: number };

/**
 * The version of a command as read from the log: its `v`, and 1 when it has none (every command
 * appended before commands carried a version is version 1). Null when `v` is not a positive integer.
 */
export function versionOf(command: unknown): number | null {
  const v = command !== null && typeof command === 'object' ? (command as { v?: unknown }).v : undefined;
  if (v === undefined) return 1;
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 1 ? v : null;
}

// --- Upcasting: an older version's command in the current shape ---

/** A command as its version's released schemas read it (docs/replay.md#command-versions): JSON in that version's shape. */
export type StoredCommand = { kind: string; payload: Record<string, unknown> } & { [field: string]: unknown };

/**
 * Turns a command of one version into the next version's shape. Pure, like the deciders: it returns
 * a new object and leaves its argument alone, and it reads no clock, draws no id and looks nothing up
 * (D3): what the newer shape needs that the older lacks is derived from the command or a fixed default,
 * so every replay upcasts a command the same way.
 */
export type Upcaster = (command: StoredCommand) => StoredCommand;

/** Per kind, per version it reads: the upcaster to the version after it. */
export type Upcasters = Readonly<Record<string, Readonly<Record<number, Upcaster>>>>;

/** The version commands are read into, and the upcasters that get them there. */
export interface CommandVersions {
  current: number;
  upcasters: Upcasters;
}

/** The upcaster of a kind whose schemas did not change from a version to the next (a new version is every kind's). */
export const unchanged: Upcaster = (command) => command;

export type UpcastResult = { ok: true; command: StoredCommand } | { ok: false; error: string };

/** A command of version `from` in the current version's shape: each version's upcaster in turn. */
export function upcast(command: StoredCommand, from: number, versions: CommandVersions): UpcastResult {
  let c = command;
  for (let v = from; v < versions.current; v++) {
    const ofKind = Object.hasOwn(versions.upcasters, c.kind) ? versions.upcasters[c.kind] : undefined;
    const step = ofKind && Object.hasOwn(ofKind, v) ? ofKind[v] : undefined;
    if (!step) return { ok: false, error: `no upcaster of ${c.kind} from version ${v} to ${v + 1}` };
    c = step(c);
  }
  return { ok: true, command: c };
}

/**
 * The upcaster of every kind from every version below the current one
 * (docs/replay.md#how-to-add-a-command-version). None while version 1 is the only one. When version
 * N + 1 is released, each kind of version N gets an entry here: `unchanged` when its schemas stayed
 * the same, else its own upcaster, which lives in the kind's folder beside its decider
 * (`products/upcastProductsUpsert.ts`) with its unit test. A version without them fails npm test
 * (packages/projection/src/commandVersions.unit.test.ts).
 */
export const COMMAND_UPCASTERS: Upcasters = {};

/** What the projector reads commands into: the version the gateway writes. */
export const COMMAND_VERSIONS: CommandVersions = { current: COMMAND_VERSION, upcasters: COMMAND_UPCASTERS };
