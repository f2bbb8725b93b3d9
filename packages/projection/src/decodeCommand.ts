import type { SchemaRegistry } from '@ingest/contracts';
import { COMMAND_VERSION, isUuid, PLATFORM_ACTOR, versionOf, type Command } from '@ingest/domain';
import { compileAll, versionReader, type ReadResult } from './versionReader.ts';

export type DecodeResult = { ok: true; command: Command } | { ok: false; error: string; commandId?: string; shop?: string };

/** Enough of a broken envelope to answer the caller that waits for it. */
function idsOf(parsed: unknown): { commandId?: string; shop?: string } {
  const o = (parsed ?? {}) as { command_id?: unknown; shop?: unknown };
  return typeof o.command_id === 'string' && isUuid(o.command_id)
    ? { commandId: o.command_id, shop: typeof o.shop === 'string' ? o.shop : '' }
    : {};
}

/**
 * Parses a command message and reads it with the released schemas of the version it was written in
 * (schemas/commands/v<N>/, docs/replay.md#command-versions): envelope, then payload by kind.
 */
export function createCommandDecoder(schemas: SchemaRegistry): (value: Buffer | null) => DecodeResult {
  const readers = new Map<number, (value: unknown) => ReadResult>();
  const readerOf = (v: number) => {
    let r = readers.get(v);
    if (!r) readers.set(v, (r = versionReader(schemas, v)));
    return r;
  };
  // The current version's schemas compiled at start, as its commands are the live ones; older ones when a command needs them.
  readerOf(COMMAND_VERSION);
  compileAll(schemas, COMMAND_VERSION);
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
    if (v > COMMAND_VERSION)
      return {
        ok: false,
        error: `command version ${v} is newer than this projector reads (up to version ${COMMAND_VERSION})`,
        ...idsOf(parsed),
      };
    const read = readerOf(v)(parsed);
    if (!read.ok) return { ...read, ...idsOf(parsed) };
    // The version is the record's, not the command's: the deciders see the same command whatever it was written in.
    const { v: _version, ...command } = read.command;
    // D28: a command without actor was appended before per-shop keys existed, with a platform secret.
    return { ok: true, command: { ...command, actor: command['actor'] ?? PLATFORM_ACTOR } as unknown as Command };
  };
}
