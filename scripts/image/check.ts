// What the built image must hold, checked inside it (as the pods run it: read-only, uid 1000, no
// network): exactly the build context under /app outside node_modules, no development tool among the
// installed packages, and the operator's CLIs starting.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { contextFiles } from './context.ts';
import { LIMITS, podman } from './podman.ts';
import { REPO } from './proc.ts';

/** Development tools that must never reach the image (dev dependencies of the workspace). */
export const DEV_ONLY = ['testcontainers', '@testcontainers/kafka', 'vitest', 'typescript', 'eslint', 'prettier', '@ingest/devstack'];

const CLI_DIR = 'services/operator/src/cli';

/** Invocations of the operator's CLIs that need neither Kafka nor PostgreSQL: each one's --help, and the topic plan. */
export function offlineCliRuns(): string[][] {
  const clis = readdirSync(join(REPO, CLI_DIR)).filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'));
  return [['node', `${CLI_DIR}/topics.ts`, '--plan'], ...clis.sort().map((f) => ['node', `${CLI_DIR}/${f}`, '--help'])];
}

// Lists /app (node_modules left out) and the name of every package pnpm installed.
const INVENTORY = `
const { readdirSync } = require('node:fs');
const files = [];
const walk = (rel) => {
  for (const e of readdirSync('/app/' + rel, { withFileTypes: true })) {
    if (e.name === 'node_modules') continue;
    const p = rel ? rel + '/' + e.name : e.name;
    if (e.isDirectory()) walk(p); else files.push(p);
  }
};
walk('');
const packages = new Set();
for (const d of readdirSync('/app/node_modules/.pnpm')) {
  const m = /^(@[^+]+\\+[^@]+|[^@]+)@/.exec(d);
  if (m) packages.add(m[1].replace('+', '/'));
}
for (const d of readdirSync('/app/node_modules/@ingest')) packages.add('@ingest/' + d);
console.log(JSON.stringify({ files: files.sort(), packages: [...packages].sort() }));
`;

const inImage = (ref: string, command: string[]): string =>
  podman(['run', '--rm', '--network=none', '--read-only', '--read-only-tmpfs=false', '--user=1000:1000', ...LIMITS, ref, ...command]);

export interface ImageCheck {
  packages: number;
  /** The CLI invocations that ran. */
  clis: string[];
  failures: string[];
}

export function checkImage(ref: string): ImageCheck {
  const failures: string[] = [];
  const { files, packages } = JSON.parse(inImage(ref, ['node', '-e', INVENTORY])) as { files: string[]; packages: string[] };
  const expected = contextFiles();
  const missing = expected.filter((f) => !files.includes(f));
  const extra = files.filter((f) => !expected.includes(f));
  if (missing.length) failures.push(`/app lacks files of the build context: ${missing.slice(0, 10).join(', ')}`);
  if (extra.length) failures.push(`/app holds files outside the build context: ${extra.slice(0, 10).join(', ')}`);
  const dev = DEV_ONLY.filter((p) => packages.includes(p));
  if (dev.length) failures.push(`development packages installed: ${dev.join(', ')}`);
  const runs = offlineCliRuns();
  for (const run of runs) {
    try {
      inImage(ref, run);
    } catch (err) {
      failures.push(`${run.join(' ')} failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  return { packages: packages.length, clis: runs.map((r) => r.slice(1).join(' ')), failures };
}
