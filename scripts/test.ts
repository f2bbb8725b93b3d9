// `npm test`: generated types fresh, typecheck, lint, unit tests, then integration tests against
// the real Kafka broker and PostgreSQL (started by the integration tier's global setup if needed).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '@ingest/devstack';

const bin = (name: string) => join(REPO_ROOT, 'node_modules', '.bin', name);
const reports = join(REPO_ROOT, '.data', 'test-reports');
rmSync(reports, { recursive: true, force: true }); // no stale counts from an earlier run
mkdirSync(reports, { recursive: true });
const vitest = (project: string): string[] => [
  'run',
  '--project',
  project,
  '--reporter=default',
  '--reporter=json',
  `--outputFile.json=${join(reports, `${project}.json`)}`,
];
const steps: Array<[string, string, string[]]> = [
  ['generated types are fresh', process.execPath, [join(REPO_ROOT, 'scripts/gen-types.ts'), '--check']],
  ['typecheck', bin('tsc'), ['-p', 'tsconfig.json']],
  ['lint', bin('eslint'), ['.']],
  // One formatting for every TypeScript/JavaScript file (.prettierrc.json; `npm run format` fixes it).
  ['format', bin('prettier'), ['--check', '.', '--log-level', 'warn']],
  // No import cycles, no imports upwards between the layers (.dependency-cruiser.cjs).
  ['import rules', bin('depcruise'), ['packages', 'services', 'scripts', 'tests', 'bench', '--config', '.dependency-cruiser.cjs']],
  // With coverage of packages/domain and its floor (vitest.config.ts): the deciders are the specification.
  ['unit tests', bin('vitest'), [...vitest('unit'), '--coverage.enabled']],
  ['integration tests', bin('vitest'), vitest('integration')],
];
const only = process.argv.slice(2);

const totals = { passed: 0, failed: 0, skipped: 0 };
function count(project: string): void {
  const file = join(reports, `${project}.json`);
  if (!existsSync(file)) return;
  const r = JSON.parse(readFileSync(file, 'utf8')) as {
    numPassedTests: number;
    numFailedTests: number;
    numPendingTests: number;
    numTodoTests: number;
  };
  totals.passed += r.numPassedTests;
  totals.failed += r.numFailedTests;
  totals.skipped += r.numPendingTests + r.numTodoTests;
}
const summary = () => console.log(`\ntests: ${totals.passed} passed, ${totals.failed} failed, ${totals.skipped} skipped`);

for (const [name, cmd, args] of steps) {
  if (only.length && !only.some((o) => name.startsWith(o))) continue;
  process.stderr.write(`\n== ${name}\n`);
  const started = Date.now();
  const r = spawnSync(cmd, args, { cwd: REPO_ROOT, stdio: 'inherit', env: process.env });
  if (name.endsWith('tests')) count(name.startsWith('unit') ? 'unit' : 'integration');
  if (r.status !== 0) {
    summary();
    process.stderr.write(`\n== FAILED: ${name} (exit ${r.status ?? r.signal})\n`);
    process.exit(r.status ?? 1);
  }
  process.stderr.write(`== ok: ${name} (${((Date.now() - started) / 1000).toFixed(1)} s)\n`);
}
summary();
