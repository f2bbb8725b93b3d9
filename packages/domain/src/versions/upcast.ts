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
