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
