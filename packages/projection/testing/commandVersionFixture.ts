import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { COMMAND_PAYLOAD_FILES, releasedSchemaName, releasedText, SCHEMA_ID_BASE, SCHEMAS_DIR } from '@ingest/contracts';
import { unchanged, type CommandVersions, type Upcaster } from '@ingest/domain';

/** v1 -> v2 of the fixture: the daily snapshot's `snapshot_date` is renamed `business_date`. */
export const renameSnapshotDate: Upcaster = (c) => {
  const { snapshot_date: date, ...rest } = c.payload;
  return { ...c, payload: { ...rest, business_date: date } };
};

/**
 * A schemas/ folder with a made-up version 2 of the command schemas beside the real v1, for the
 * tests of the version mechanism only (it is no production version, docs/replay.md#command-versions).
 * v2 is the released v1 but for the daily snapshot, whose `snapshot_date` is called `business_date`;
 * made from v1's files alone, it does not move with today's schemas or a real v2. `versions` holds the upcasters a real v2
 * would register; a test may take one away or break one.
 */
export function fixtureVersion2(): { dir: string; versions: CommandVersions; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'command-v2-'));
  // Only the released v1: a released file stands alone, and today's files are not read.
  cpSync(join(SCHEMAS_DIR, 'commands', 'v1'), join(dir, 'commands', 'v1'), { recursive: true });
  mkdirSync(join(dir, 'commands', 'v2'));
  for (const file of readdirSync(join(dir, 'commands', 'v1'))) {
    const schema = JSON.parse(readFileSync(join(dir, 'commands', 'v1', file), 'utf8')) as Record<string, unknown>;
    let v2: Record<string, unknown> = { ...schema, $id: `${SCHEMA_ID_BASE}${releasedSchemaName(2, file)}` };
    if (file === COMMAND_PAYLOAD_FILES['inventory.daily_snapshot']) {
      const { snapshot_date: date, ...others } = schema['properties'] as Record<string, unknown>;
      v2 = { ...v2, required: ['business_date'], properties: { ...others, business_date: date } };
    }
    writeFileSync(join(dir, 'commands', 'v2', file), releasedText(v2));
  }
  const upcasters = Object.fromEntries(
    Object.keys(COMMAND_PAYLOAD_FILES).map((kind) => [kind, { 1: kind === 'inventory.daily_snapshot' ? renameSnapshotDate : unchanged }]),
  );
  return { dir, versions: { current: 2, upcasters }, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
