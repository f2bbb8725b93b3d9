// `npm test`: generated types fresh, typecheck, lint, unit tests, then integration tests against
// the real Kafka broker and PostgreSQL (started by the integration tier's global setup if needed).
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { REPO_ROOT } from '@ingest/devstack';

const bin = (name: string) => join(REPO_ROOT, 'node_modules', '.bin', name);
const steps: Array<[string, string, string[]]> = [
  ['generated types are fresh', process.execPath, [join(REPO_ROOT, 'scripts/gen-types.ts'), '--check']],
  ['typecheck', bin('tsc'), ['-p', 'tsconfig.json']],
  ['lint', bin('eslint'), ['.']],
  ['unit tests', bin('vitest'), ['run', '--project', 'unit']],
  ['integration tests', bin('vitest'), ['run', '--project', 'integration']],
];
const only = process.argv.slice(2);

for (const [name, cmd, args] of steps) {
  if (only.length && !only.some((o) => name.startsWith(o))) continue;
  process.stderr.write(`\n== ${name}\n`);
  const started = Date.now();
  const r = spawnSync(cmd, args, { cwd: REPO_ROOT, stdio: 'inherit', env: process.env });
  if (r.status !== 0) {
    process.stderr.write(`\n== FAILED: ${name} (exit ${r.status ?? r.signal})\n`);
    process.exit(r.status ?? 1);
  }
  process.stderr.write(`== ok: ${name} (${((Date.now() - started) / 1000).toFixed(1)} s)\n`);
}
