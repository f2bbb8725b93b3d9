import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  changedSinceRelease,
  COMMAND_PAYLOAD_FILES,
  ENVELOPE_FILE,
  lockProblems,
  releasedCommandFiles,
  releasedCommandsLock,
  releasedCommandVersions,
  SCHEMAS_DIR,
} from '@ingest/contracts';
import { COMMAND_VERSION } from '@ingest/domain';

// The guards of docs/replay.md#command-versions: what the log holds is read for ever (D26), so the
// schemas of a released version never change, the gateway writes exactly what the current version
// reads, and a new version is shipped the one way the doc says.
const HOW = 'docs/replay.md#how-to-add-a-command-version';

describe('the released command schemas (schemas/commands/v<N>/)', () => {
  it('never change: each file is as schemas/commands/released.sha256 locked it', () => {
    expect(
      lockProblems(releasedCommandsLock()),
      'A released command schema changed. The log keeps the commands of that version for ever and every replay reads them ' +
        'with these files (D26), so a released version never changes, not even a description. Restore it ' +
        `(git checkout schemas/commands) and ship the change as a new version: ${HOW}`,
    ).toEqual([]);
  });

  it(`are the gateway's: today's schemas/commands/*.json are the current version, v${COMMAND_VERSION}, as released`, () => {
    expect(
      releasedCommandVersions(),
      `the gateway writes v: ${COMMAND_VERSION}, but schemas/commands/v${COMMAND_VERSION}/ is not released: ` +
        `run node scripts/command-schemas.ts release and commit what it writes (${HOW})`,
    ).toContain(COMMAND_VERSION);
    expect(
      changedSinceRelease(COMMAND_VERSION),
      `schemas/commands/ no longer reads what schemas/commands/v${COMMAND_VERSION}/ does, yet the gateway still writes ` +
        `v: ${COMMAND_VERSION} (the http definitions the command schemas refer to count: a released file holds its own copy). ` +
        `The log already holds v${COMMAND_VERSION} commands of the released shape, and one version cannot mean two shapes. ` +
        'Undo the change (a narrower request gets a definition of its own, docs/api.md#a-stricter-request-description), ' +
        `or ship it as version ${COMMAND_VERSION + 1}: raise COMMAND_VERSION, run node scripts/command-schemas.ts release, ` +
        `and register an upcaster from v${COMMAND_VERSION} for every kind (${HOW})`,
    ).toEqual([]);
  });

  it('are every version from 1 to the current one, each with its envelope and the payload of every kind it names', () => {
    const versions = releasedCommandVersions();
    expect(versions, `the versions must be 1 to COMMAND_VERSION (${COMMAND_VERSION}), each released once (${HOW})`).toEqual(
      Array.from({ length: COMMAND_VERSION }, (_, i) => i + 1),
    );
    for (const v of versions) {
      const envelope = JSON.parse(readFileSync(join(SCHEMAS_DIR, 'commands', `v${v}`, ENVELOPE_FILE), 'utf8')) as {
        properties: { kind: { enum: string[] } };
      };
      const kinds = envelope.properties.kind.enum;
      const files = kinds.map((k) => COMMAND_PAYLOAD_FILES[k as keyof typeof COMMAND_PAYLOAD_FILES] ?? `${k}: no payload file named`);
      expect(releasedCommandFiles(v), `schemas/commands/v${v}/`).toEqual([ENVELOPE_FILE, ...files].sort());
    }
  });
});
