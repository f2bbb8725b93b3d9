import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, posix, relative, sep } from 'node:path';
import type { JsonObject } from '../schemaFiles.ts';
import { SCHEMAS_DIR } from '../validation.ts';
import { canonicalJson } from './canonicalJson.ts';
import type { DocSet } from './types.ts';

/** The contracts as served, each at its URL path (docs/api.md#changing-a-published-contract). */
export const PUBLISHED_DIR = join(SCHEMAS_DIR, 'published');
/** The contracts of the last release, the baseline of the compatibility check. */
export const RELEASED_DIR = join(PUBLISHED_DIR, 'released');

/** The `.json` files under `dir` by their path below it, `released/` left out (it is a set of its own). */
export function readDocSet(dir: string): Map<string, JsonObject> {
  const out = new Map<string, JsonObject>();
  const walk = (at: string): void => {
    if (!existsSync(at)) return;
    for (const entry of readdirSync(at, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const path = join(at, entry.name);
      if (entry.isDirectory() && !(at === dir && entry.name === 'released')) walk(path);
      else if (entry.isFile() && entry.name.endsWith('.json'))
        out.set(relative(dir, path).split(sep).join(posix.sep), JSON.parse(readFileSync(path, 'utf8')) as JsonObject);
    }
  };
  walk(dir);
  return out;
}

/** How the files under `dir` differ from `set` written canonically: files to rewrite, to add, to delete. */
export function staleFiles(dir: string, set: DocSet): { changed: string[]; missing: string[]; extra: string[] } {
  const onDisk = readDocSet(dir);
  const out = { changed: [] as string[], missing: [] as string[], extra: [] as string[] };
  for (const [name, doc] of set) {
    if (!onDisk.has(name)) out.missing.push(name);
    else if (readFileSync(join(dir, name), 'utf8') !== canonicalJson(doc)) out.changed.push(name);
  }
  for (const name of onDisk.keys()) if (!set.has(name)) out.extra.push(name);
  return out;
}

/** Makes the files under `dir` (but `released/`) exactly `set`, written canonically; returns what changed. */
export function writeDocSet(dir: string, set: DocSet): string[] {
  const { changed, missing, extra } = staleFiles(dir, set);
  for (const name of [...changed, ...missing]) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), canonicalJson(set.get(name)));
  }
  for (const name of extra) rmSync(join(dir, name));
  return [...changed, ...missing, ...extra].sort();
}
