import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, posix, relative, sep } from 'node:path';

/**
 * Files that never change once committed: the released command schemas (`schemas/commands/v<N>/`)
 * and the command corpus (`tests/fixtures/command-log/v<N>/`), which old commands and every replay
 * are read against (D26). A lock file beside them lists each one's sha256, in `sha256sum` format
 * (`<hex>  <path below the lock's folder>`), so `sha256sum -c` checks it too.
 */
export interface FileLock {
  /** The folder the lock's paths are relative to. */
  dir: string;
  /** The lock file's name in `dir`. */
  lock: string;
  /** Which files below `dir` (path with `/`) the lock must list. */
  covers: (path: string) => boolean;
}

export function sha256Hex(bytes: Buffer | string): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** The lock's entries: path -> sha256 (an absent lock is empty). */
export function readLock(l: FileLock): Map<string, string> {
  const file = join(l.dir, l.lock);
  const out = new Map<string, string>();
  if (!existsSync(file)) return out;
  for (const [n, line] of readFileSync(file, 'utf8').split('\n').entries()) {
    if (!line.trim()) continue;
    const m = /^([0-9a-f]{64}) [ *](.+)$/.exec(line);
    if (!m?.[1] || !m[2]) throw new Error(`${file}:${n + 1}: not a sha256sum line: ${line}`);
    out.set(m[2], m[1]);
  }
  return out;
}

/** The lock's text for these entries, in path order. */
export function lockText(entries: ReadonlyMap<string, string>): string {
  return [...entries]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([path, hash]) => `${hash}  ${path}\n`)
    .join('');
}

/** Every file below `dir` that the lock covers, by its path with `/`. */
export function coveredFiles(l: FileLock): string[] {
  const out: string[] = [];
  const walk = (at: string): void => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const path = join(at, entry.name);
      if (entry.isDirectory()) walk(path);
      else {
        const rel = relative(l.dir, path).split(sep).join(posix.sep);
        if (entry.isFile() && l.covers(rel)) out.push(rel);
      }
    }
  };
  if (existsSync(l.dir)) walk(l.dir);
  return out.sort();
}

/**
 * What differs between the files and their lock: a file changed since it was locked, a locked file
 * gone, a covered file the lock does not list. Empty when they agree.
 */
export function lockProblems(l: FileLock): string[] {
  const locked = readLock(l);
  const problems: string[] = [];
  for (const [path, hash] of locked) {
    const file = join(l.dir, path);
    if (!existsSync(file)) problems.push(`${path}: listed in ${l.lock} but missing`);
    else {
      const now = sha256Hex(readFileSync(file));
      if (now !== hash) problems.push(`${path}: changed since it was locked (sha256 ${now.slice(0, 16)}…, locked ${hash.slice(0, 16)}…)`);
    }
  }
  for (const path of coveredFiles(l)) if (!locked.has(path)) problems.push(`${path}: not listed in ${l.lock}`);
  return problems;
}
