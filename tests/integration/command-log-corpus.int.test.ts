import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { lockProblems, SchemaRegistry } from '@ingest/contracts';
import { scratchDatabase } from '@ingest/db/testing';
import { COMMAND_VERSION } from '@ingest/domain';
import { createCommandDecoder } from '@ingest/projection';
import {
  CORPUS_DIR,
  CORPUS_LOCK,
  readCorpus,
  readModelDigest,
  replayCorpus,
  type ReadModelDigest,
  type ReplayCounts,
} from '../support/commandCorpus.ts';

// Commands replay for ever (D26): the frozen corpus, records exactly as the gateway wrote them, goes
// through today's decode and projection into a fresh database and must reproduce the read model
// committed beside it (docs/testing.md#the-command-corpus). A deliberate change of the projection
// rewrites read-model.json in the same commit, with the reason: UPDATE_READ_MODEL_CHECKSUM=1.
const VERSION = 'v1';
const CHECKSUM_FILE = join(CORPUS_DIR, VERSION, 'read-model.json');
const UPDATE = process.env['UPDATE_READ_MODEL_CHECKSUM'] === '1';

interface Checksum {
  corpus: string;
  replay: Omit<ReplayCounts, 'undecodable'>;
  tables: ReadModelDigest;
}

const db = scratchDatabase('ingest_test_corpus');

const decode = createCommandDecoder(new SchemaRegistry());
const records = readCorpus(VERSION);

function differences(expected: Checksum, actual: Checksum): string[] {
  const out: string[] = [];
  for (const [k, v] of Object.entries(actual.replay))
    if (expected.replay[k as keyof Checksum['replay']] !== v)
      out.push(`replay ${k}: ${v} (committed ${expected.replay[k as keyof Checksum['replay']]})`);
  for (const table of new Set([...Object.keys(expected.tables), ...Object.keys(actual.tables)])) {
    const [e, a] = [expected.tables[table], actual.tables[table]];
    if (e?.sha256 !== a?.sha256 || e?.rows !== a?.rows)
      out.push(
        `${table}: ${a?.rows ?? '-'} rows, sha256 ${a?.sha256.slice(0, 16) ?? '-'}… (committed ${e?.rows ?? '-'} rows, ${e?.sha256.slice(0, 16) ?? '-'}…)`,
      );
  }
  return out;
}

describe(`the frozen command corpus ${VERSION} (docs/testing.md#the-command-corpus)`, () => {
  it('is as it was committed: a corpus is never regenerated', () => {
    expect(
      lockProblems(CORPUS_LOCK),
      'tests/fixtures/command-log/ holds commands exactly as a past gateway wrote them: they are never edited or regenerated. ' +
        'Restore the file (git checkout); a new corpus goes beside it in a new folder (docs/testing.md#the-command-corpus)',
    ).toEqual([]);
  });

  it('replays through decode and apply into a fresh database to the committed read model', async () => {
    const { undecodable, ...replay } = await replayCorpus(db.pool, records, decode);
    expect(undecodable, 'every command of the log must still decode (D26)').toEqual([]);
    const actual: Checksum = { corpus: `${VERSION}/commands.jsonl`, replay, tables: await readModelDigest(db.pool) };
    if (UPDATE) {
      writeFileSync(CHECKSUM_FILE, `${JSON.stringify(actual, null, 2)}\n`);
      console.warn(`wrote ${CHECKSUM_FILE}: commit it with the change that moved it, and say why`);
      return;
    }
    const expected = JSON.parse(readFileSync(CHECKSUM_FILE, 'utf8')) as Checksum;
    expect(
      differences(expected, actual),
      'The corpus no longer projects to the committed read model: a replay of the existing log would rebuild other rows (D26). ' +
        'If the projection changed on purpose, rerun with UPDATE_READ_MODEL_CHECKSUM=1 and commit tests/fixtures/command-log/v1/read-model.json ' +
        'in the same commit, saying why in its message; otherwise the change breaks replays (docs/testing.md#the-command-corpus)',
    ).toEqual([]);
  });

  it("reads each record as the same command with the version today's gateway writes in it (v: 1) as without (docs/replay.md#command-versions)", () => {
    for (const [i, r] of records.entries()) {
      const value = JSON.parse(r.value) as Record<string, unknown>;
      expect(value['v'], `record ${i} was written before commands carried a version`).toBeUndefined();
      const today = Buffer.from(JSON.stringify({ v: COMMAND_VERSION, ...value }));
      expect(decode(today), `record ${i}`).toEqual(decode(Buffer.from(r.value)));
    }
  });

  it('changes nothing when replayed again: every record is a duplicate (D4)', async () => {
    const before = await readModelDigest(db.pool);
    const again = await replayCorpus(db.pool, records, decode);
    expect(again).toMatchObject({ applied: 0, duplicates: records.length, failed: 0, undecodable: [] });
    expect(await readModelDigest(db.pool)).toEqual(before);
  });
});
