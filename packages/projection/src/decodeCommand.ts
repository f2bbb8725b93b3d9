import { COMMAND_PAYLOAD_FILES, ENVELOPE_FILE, releasedSchemaName, type SchemaRegistry, type Validator } from '@ingest/contracts';
import { COMMAND_VERSIONS, isUuid, PLATFORM_ACTOR, upcast, versionOf, type Command, type CommandVersions } from '@ingest/domain';

export type DecodeResult = { ok: true; command: Command } | { ok: false; error: string; commandId?: string; shop?: string };

/** Enough of a broken envelope to answer the caller that waits for it. */
function idsOf(parsed: unknown): { commandId?: string; shop?: string } {
  const o = (parsed ?? {}) as { command_id?: unknown; shop?: unknown };
  return typeof o.command_id === 'string' && isUuid(o.command_id)
    ? { commandId: o.command_id, shop: typeof o.shop === 'string' ? o.shop : '' }
    : {};
}

/**
 * Parses a command message, reads it with the released schemas of the version it was written in
 * (schemas/commands/v<N>/: envelope, then payload by kind) and upcasts it to the current version, so
 * the deciders only ever see the current shape (docs/replay.md#command-versions). `versions` is the
 * production registry but in the tests of the mechanism.
 */
export function createCommandDecoder(
  schemas: SchemaRegistry,
  versions: CommandVersions = COMMAND_VERSIONS,
): (value: Buffer | null) => DecodeResult {
  const { current } = versions;
  const readers = new Map<number, (value: unknown) => ReadResult>();
  const readerOf = (v: number) => {
    let r = readers.get(v);
    if (!r) readers.set(v, (r = versionReader(schemas, v)));
    return r;
  };
  // The current version's schemas compiled at start, as its commands are the live ones; older ones when a command needs them.
  readerOf(current);
  compileAll(schemas, current);

  /** An older command in the current shape, read again with the current schemas: an upcaster's slip is caught here, not in a decider. */
  const upcastRead = (read: ReadCommand, v: number): ReadResult => {
    const up = upcast(withoutVersion(read), v, versions);
    if (!up.ok) return up;
    const again = readerOf(current)({ ...up.command, v: current });
    return again.ok ? again : { ok: false, error: `${read.kind} upcast from version ${v} does not fit version ${current}: ${again.error}` };
  };

  return (value) => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(value?.toString('utf8') ?? '');
    } catch {
      return { ok: false, error: 'command is not JSON' };
    }
    // The version it was written in (none: 1).
    const v = versionOf(parsed);
    if (v === null) return { ok: false, error: 'invalid command envelope: v must be a positive integer', ...idsOf(parsed) };
    // Written by a newer gateway than this code: parked, and applied by an operator's retry once the
    // projector reads its version (deploy readers first).
    if (v > current)
      return { ok: false, error: `command version ${v} is newer than this projector reads (up to version ${current})`, ...idsOf(parsed) };
    let read = readerOf(v)(parsed);
    if (read.ok && v < current) read = upcastRead(read.command, v);
    if (!read.ok) return { ...read, ...idsOf(parsed) };
    const command = withoutVersion(read.command);
    // D28: a command without actor was appended before per-shop keys existed, with a platform secret.
    return { ok: true, command: { ...command, actor: command['actor'] ?? PLATFORM_ACTOR } as unknown as Command };
  };
}

/** The version is the record's, not the command's: the deciders see the same command whatever it was written in. */
function withoutVersion({ v: _v, ...command }: ReadCommand): ReadCommand {
  return command;
}

/** A command as one version's schemas accepted it: an envelope with an id, a shop, a kind and a payload. */
type ReadCommand = { command_id: string; shop: string; kind: string; payload: Record<string, unknown> } & {
  [field: string]: unknown;
};

type ReadResult = { ok: true; command: ReadCommand } | { ok: false; error: string };

/**
 * Reads a command with the schemas of one released version (schemas/commands/v<N>/,
 * docs/replay.md#command-versions): the envelope, then the payload of its kind. Unknown fields are
 * dropped, as for every command (the SchemaRegistry). A kind's payload schema is compiled on first use.
 */
function versionReader(schemas: SchemaRegistry, version: number): (value: unknown) => ReadResult {
  const envelope = schemas.validator<ReadCommand>(releasedSchemaName(version, ENVELOPE_FILE));
  const payloads = new Map<string, Validator<unknown>>();
  const payloadOf = (kind: string): Validator<unknown> | undefined => {
    if (!Object.hasOwn(COMMAND_PAYLOAD_FILES, kind)) return undefined;
    let p = payloads.get(kind);
    if (!p)
      payloads.set(
        kind,
        (p = schemas.validator(releasedSchemaName(version, COMMAND_PAYLOAD_FILES[kind as keyof typeof COMMAND_PAYLOAD_FILES]))),
      );
    return p;
  };
  return (value) => {
    const env = envelope(value);
    if (!env.ok) return { ok: false, error: `invalid command envelope: ${env.failure.message}` };
    const payload = payloadOf(env.value.kind)?.(env.value.payload);
    if (!payload?.ok) return { ok: false, error: `invalid ${env.value.kind} payload: ${payload?.failure.message}` };
    return { ok: true, command: env.value };
  };
}

/** Every kind's payload schema of the version compiled now (the current version's, at start-up). */
function compileAll(schemas: SchemaRegistry, version: number): void {
  for (const file of Object.values(COMMAND_PAYLOAD_FILES)) schemas.validator(releasedSchemaName(version, file));
}
