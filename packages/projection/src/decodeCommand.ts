import type { SchemaRegistry, Validator } from '@ingest/contracts';
import type { CommandEnvelope } from '@ingest/contracts/types';
import { isUuid, PLATFORM_ACTOR, type Command } from '@ingest/domain';

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
    const env = envelope(parsed);
    if (!env.ok) return { ok: false, error: `invalid command envelope: ${env.failure.message}`, ...idsOf(parsed) };
    const ids = { commandId: env.value.command_id, shop: env.value.shop };
    const payload = payloads.get(env.value.kind)?.(env.value.payload);
    if (!payload?.ok) return { ok: false, error: `invalid ${env.value.kind} payload: ${payload?.failure.message}`, ...ids };
    // D28: a command without actor was appended before per-shop keys existed, with a platform secret.
    return { ok: true, command: { ...env.value, actor: env.value.actor ?? PLATFORM_ACTOR } as unknown as Command };
  };
}
