import { COMMAND_PAYLOAD_FILES, ENVELOPE_FILE, releasedSchemaName, type SchemaRegistry, type Validator } from '@ingest/contracts';

/** A command as one version's schemas accepted it: an envelope with an id, a shop, a kind and a payload. */
export type ReadCommand = { command_id: string; shop: string; kind: string; payload: Record<string, unknown> } & {
  [field: string]: unknown;
};

export type ReadResult = { ok: true; command: ReadCommand } | { ok: false; error: string };

/**
 * Reads a command with the schemas of one released version (schemas/commands/v<N>/,
 * docs/replay.md#command-versions): the envelope, then the payload of its kind. Unknown fields are
 * dropped, as for every command (the SchemaRegistry). A kind's payload schema is compiled on first use.
 */
export function versionReader(schemas: SchemaRegistry, version: number): (value: unknown) => ReadResult {
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
export function compileAll(schemas: SchemaRegistry, version: number): void {
  for (const file of Object.values(COMMAND_PAYLOAD_FILES)) schemas.validator(releasedSchemaName(version, file));
}
