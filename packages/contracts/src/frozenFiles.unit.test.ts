import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { coveredFiles, lockProblems, lockText, readLock, sha256Hex, type FileLock } from './frozenFiles.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A folder with v1/a.json, v1/b.json and a file the lock does not cover. */
function folder(): FileLock {
  const dir = mkdtempSync(join(tmpdir(), 'frozen-'));
  dirs.push(dir);
  mkdirSync(join(dir, 'v1'));
  writeFileSync(join(dir, 'v1', 'a.json'), '{"a":1}\n');
  writeFileSync(join(dir, 'v1', 'b.json'), '{"b":1}\n');
  writeFileSync(join(dir, 'current.json'), '{}\n');
  return { dir, lock: 'released.sha256', covers: (p) => /^v\d+\//.test(p) };
}

const lockAll = (l: FileLock) =>
  writeFileSync(
    join(l.dir, l.lock),
    lockText(
      new Map([
        ['v1/b.json', sha256Hex('{"b":1}\n')],
        ['v1/a.json', sha256Hex('{"a":1}\n')],
      ]),
    ),
  );

describe('a lock of frozen files (sha256sum format)', () => {
  it('writes one sha256sum line per file in path order, and reads it back', () => {
    const l = folder();
    lockAll(l);
    expect(readLock(l)).toEqual(
      new Map([
        ['v1/a.json', sha256Hex('{"a":1}\n')],
        ['v1/b.json', sha256Hex('{"b":1}\n')],
      ]),
    );
    expect(lockText(readLock(l))).toMatch(/^[0-9a-f]{64} {2}v1\/a\.json\n[0-9a-f]{64} {2}v1\/b\.json\n$/);
  });

  it('covers only the files its rule names', () => {
    expect(coveredFiles(folder())).toEqual(['v1/a.json', 'v1/b.json']);
  });

  it('agrees with untouched files', () => {
    const l = folder();
    lockAll(l);
    expect(lockProblems(l)).toEqual([]);
  });

  it('names a changed, a missing and an unlisted file', () => {
    const l = folder();
    lockAll(l);
    writeFileSync(join(l.dir, 'v1', 'a.json'), '{"a":2}\n');
    rmSync(join(l.dir, 'v1', 'b.json'));
    writeFileSync(join(l.dir, 'v1', 'c.json'), '{}\n');
    expect(lockProblems(l)).toEqual([
      expect.stringMatching(/^v1\/a\.json: changed since it was locked/),
      'v1/b.json: listed in released.sha256 but missing',
      'v1/c.json: not listed in released.sha256',
    ]);
  });

  it('refuses a line that is not sha256sum output', () => {
    const l = folder();
    writeFileSync(join(l.dir, l.lock), 'abc  v1/a.json\n');
    expect(() => readLock(l)).toThrow(/not a sha256sum line/);
  });
});
