import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  canonicalJson,
  changedSinceRelease,
  COMMAND_PAYLOAD_FILES,
  ENVELOPE_FILE,
  lockProblems,
  releasedCommandFiles,
  releasedCommandsLock,
  releasedCommandVersions,
  SCHEMAS_DIR,
  shapeOf,
} from '@ingest/contracts';
import { COMMAND_VERSION, COMMAND_VERSIONS, unchanged, type CommandVersions } from '@ingest/domain';
import { fixtureVersion2, renameSnapshotDate } from '../testing/commandVersionFixture.ts';

// The guards of docs/replay.md#command-versions: what the log holds is read for ever (D26), so the
// schemas of a released version never change, the gateway writes exactly what the current version
// reads, and a new version is shipped the one way the doc says.
const HOW = 'docs/replay.md#how-to-add-a-command-version';

type Json = Record<string, unknown>;
const released = (dir: string, v: number, file: string): Json | null => {
  const path = join(dir, 'commands', `v${v}`, file);
  if (!existsSync(path)) return null;
  const { $id: _id, ...schema } = JSON.parse(readFileSync(path, 'utf8')) as Json;
  return schema;
};
const kindsOf = (envelope: Json | null): string[] =>
  ((envelope?.['properties'] as Json | undefined)?.['kind'] as { enum?: string[] } | undefined)?.enum ?? [];
/** An envelope without its list of kinds: a kind added in a version does not change the others. */
const withoutKinds = (envelope: Json | null): unknown => {
  const { kind: _kind, ...properties } = (envelope?.['properties'] as Json | undefined) ?? {};
  return shapeOf({ ...envelope, properties });
};
const same = (a: unknown, b: unknown) => canonicalJson(shapeOf(a)) === canonicalJson(shapeOf(b));

/**
 * What a registry lacks: every kind of every version below the current one needs its upcaster to the
 * next, and one registered as `unchanged` must have the same envelope and payload schemas in both.
 */
function upcasterProblems(versions: CommandVersions, dir: string = SCHEMAS_DIR): string[] {
  const out: string[] = [];
  for (let v = 1; v < versions.current; v++) {
    const [envelope, next] = [released(dir, v, ENVELOPE_FILE), released(dir, v + 1, ENVELOPE_FILE)];
    for (const kind of kindsOf(envelope)) {
      const step = Object.hasOwn(versions.upcasters, kind) ? versions.upcasters[kind]?.[v] : undefined;
      const file = COMMAND_PAYLOAD_FILES[kind as keyof typeof COMMAND_PAYLOAD_FILES] ?? `${kind}.json`;
      if (!step) out.push(`${kind}: no upcaster from version ${v} to ${v + 1}`);
      else if (
        step === unchanged &&
        !(same(withoutKinds(envelope), withoutKinds(next)) && same(released(dir, v, file), released(dir, v + 1, file)))
      )
        out.push(`${kind}: registered as unchanged from version ${v} to ${v + 1}, but its envelope or payload schema changed`);
    }
  }
  return out;
}

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

describe('the upcasters (packages/domain/src/versions/commandVersions.ts)', () => {
  it('turn every kind of every older version into the next, and none calls a changed kind unchanged', () => {
    expect(
      upcasterProblems(COMMAND_VERSIONS),
      `Every kind of every version below the current one (${COMMAND_VERSION}) needs its upcaster to the next version in ` +
        'COMMAND_UPCASTERS: the log holds commands of each, and the deciders read only the current shape. Write them ' +
        `(\`unchanged\` where a kind's schemas stayed the same) and register them: ${HOW}`,
    ).toEqual([]);
  });

  const fixture = fixtureVersion2();
  afterAll(() => fixture.remove());

  it('this check passes a version 2 with an upcaster for every kind (the fixture of decodeCommand.upcast.unit.test.ts)', () => {
    expect(upcasterProblems(fixture.versions, fixture.dir)).toEqual([]);
  });

  it('this check names a kind a new version has no upcaster for', () => {
    const { 'channels.register': _gone, ...others } = fixture.versions.upcasters;
    expect(upcasterProblems({ ...fixture.versions, upcasters: others }, fixture.dir)).toEqual([
      'channels.register: no upcaster from version 1 to 2',
    ]);
    expect(upcasterProblems({ ...fixture.versions, upcasters: {} }, fixture.dir)).toHaveLength(Object.keys(COMMAND_PAYLOAD_FILES).length);
  });

  it('this check refuses `unchanged` for a kind whose schema changed', () => {
    const upcasters = { ...fixture.versions.upcasters, 'inventory.daily_snapshot': { 1: unchanged } };
    expect(upcasterProblems({ ...fixture.versions, upcasters }, fixture.dir)).toEqual([
      'inventory.daily_snapshot: registered as unchanged from version 1 to 2, but its envelope or payload schema changed',
    ]);
    expect(fixture.versions.upcasters['inventory.daily_snapshot']?.[1]).toBe(renameSnapshotDate);
  });
});
