// The build context as the builder sees it: every file of the working tree that .dockerignore lets
// through (read with Docker's matching rules). Its hash tells whether an image is still the one the
// sources would build; its list is what the image's /app must hold, outside node_modules.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import dockerignore from '@balena/dockerignore';
import { REPO } from './proc.ts';

// Never part of the context (the unit test holds .dockerignore to that); skipped for speed only.
const NEVER = new Set(['node_modules', '.git', '.data', '.tools']);

/** Repository-relative paths of the files a build of `root` sends, sorted. */
export function contextFiles(root = REPO): string[] {
  // A CommonJS module whose types declare an ES default: under nodenext its callable is `.default`.
  const ig = dockerignore.default().add(readFileSync(join(root, '.dockerignore'), 'utf8').split('\n'));
  const out: string[] = [];
  const walk = (rel: string): void => {
    for (const entry of readdirSync(join(root, rel), { withFileTypes: true })) {
      if (NEVER.has(entry.name)) continue;
      const path = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isDirectory()) walk(path);
      else if (!ig.ignores(path)) out.push(path);
    }
  };
  walk('');
  return out.sort();
}

/** Hash of what an image is built from: the Dockerfile, the base image and every file of the context. */
export function contextHash(baseRef: string, root = REPO): string {
  const hash = createHash('sha256')
    .update(readFileSync(join(root, 'Dockerfile')))
    .update(`\0${baseRef}\0`);
  for (const file of contextFiles(root))
    hash
      .update(`${file}\0`)
      .update(readFileSync(join(root, file)))
      .update('\0');
  return hash.digest('hex').slice(0, 16);
}
