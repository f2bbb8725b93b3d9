import type { SchemaRegistry, Validator } from '@ingest/contracts';
import type { CommandEnvelope } from '@ingest/contracts/types';
import { COMMAND_VERSION, isUuid, PLATFORM_ACTOR, versionOf, type Command } from '@ingest/domain';

const PAYLOAD_SCHEMA = {
  'products.upsert': 'commands/products-upsert.json',
  'locations.register': 'commands/locations-register.json',
  'channels.register': 'commands/channels-register.json',
  'inventory.snapshot': 'commands/inventory-snapshot.json',
  'inventory.available': 'commands/inventory-available.json',
  'inventory.levels': 'commands/inventory-levels.json',
  'inventory.daily_snapshot': 'commands/daily-snapshot.json',
  'order_lines.upsert': 'commands/order-lines-upsert.json',
} as const satisfies Record<Command['kind'], string>;

export type DecodeResult = { ok: true; command: Command } | { ok: false; error: string; commandId?: string; shop?: string };

/** Enough of a broken envelope to answer the caller that waits for it. */
function idsOf(parsed: unknown): { commandId?: string; shop?: string } {
  const o = (parsed ?? {}) as { command_id?: unknown; shop?: unknown };
  return typeof o.command_id === 'string' && isUuid(o.command_id)
    ? { commandId: o.command_id, shop: typeof o.shop === 'string' ? o.shop : '' }
    : {};
}

/** Parses and validates a command message against schemas/commands (envelope, then payload by kind). */
export function createCommandDecoder(schemas: SchemaRegistry): (value: Buffer | null) => DecodeResult {
  const envelope = schemas.validator<CommandEnvelope>('commands/envelope.json');
  const payloads = new Map<string, Validator<unknown>>(
    Object.entries(PAYLOAD_SCHEMA).map(([kind, schema]) => [kind, schemas.validator(schema)]),
  );
  return (value) => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(value?.toString('utf8') ?? '');
    } catch {
      return { ok: false, error: 'command is not JSON' };
    }
    // The version it was written in (none: 1), docs/replay.md#command-versions.
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
    const env = envelope(parsed);
    if (!env.ok) return { ok: false, error: `invalid command envelope: ${env.failure.message}`, ...idsOf(parsed) };
    const ids = { commandId: env.value.command_id, shop: env.value.shop };
    const payload = payloads.get(env.value.kind)?.(env.value.payload);
    if (!payload?.ok) return { ok: false, error: `invalid ${env.value.kind} payload: ${payload?.failure.message}`, ...ids };
    // The version is the record's, not the command's: the deciders see the same command whatever it was written in.
    const { v: _version, ...command } = env.value;
    // D28: a command without actor was appended before per-shop keys existed, with a platform secret.
    return { ok: true, command: { ...command, actor: command.actor ?? PLATFORM_ACTOR } as unknown as Command };
  };
}
