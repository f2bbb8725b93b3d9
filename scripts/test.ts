// `npm test`: generated types and published contracts fresh (the contracts compatible with the last release), typecheck, lint, format, import rules and the unit tests, one after
// the other, and beside them the integration tests against the real Kafka broker and PostgreSQL
// (started by the integration tier's global setup if needed).
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '@ingest/devstack';

const bin = (name: string) => join(REPO_ROOT, 'node_modules', '.bin', name);
const reports = join(REPO_ROOT, '.data', 'test-reports');
rmSync(reports, { recursive: true, force: true }); // no stale counts from an earlier run
mkdirSync(reports, { recursive: true });
const vitest = (project: string, report = project): string[] => [
  'run',
  '--project',
  project,
  '--reporter=default',
  '--reporter=json',
  `--outputFile.json=${join(reports, `${report}.json`)}`,
];
const steps: Array<[string, string, string[]]> = [
  ['generated types are fresh', process.execPath, [join(REPO_ROOT, 'scripts/gen-types.ts'), '--check']],
  // schemas/published/ is what the gateway serves, and nothing since the last release breaks a reader
  // unless docs/changelog.md declares it (docs/api.md#changing-a-published-contract).
  ['contracts are fresh and compatible with the last release', process.execPath, [join(REPO_ROOT, 'scripts/contracts.ts'), 'check']],
  // TypeScript 7, the native compiler: the same checks in 2 s instead of 7-13 s. typescript-eslint
  // and the mutation checker still use the JavaScript compiler (`typescript`, 5.9), whose API they need.
  ['typecheck', process.execPath, [join(REPO_ROOT, 'node_modules', 'typescript-go', 'bin', 'tsc'), '-p', 'tsconfig.json']],
  ['lint', bin('eslint'), ['.']],
  // The type-aware rules (.oxlintrc.json; why they are not in ESLint: eslint.config.mjs).
  ['type-aware lint', bin('oxlint'), ['--type-aware', '--tsconfig', 'tsconfig.json', '--deny-warnings']],
  // One formatting for every TypeScript/JavaScript file (.prettierrc.json; `npm run format` fixes it).
  ['format', bin('prettier'), ['--check', '.', '--log-level', 'warn']],
  // No import cycles, no imports upwards between the layers (.dependency-cruiser.cjs).
  ['import rules', bin('depcruise'), ['packages', 'services', 'scripts', 'tests', 'bench', '--config', '.dependency-cruiser.cjs']],
  ['unit tests', bin('vitest'), [...vitest('unit'), '--exclude', 'packages/domain/**']],
  // The deciders are the specification: their own tests hold packages/domain to a coverage floor
  // (vitest.config.ts). Coverage slows every test it runs (about 10 of the tier's 45 s when it was on
  // for the whole tier), so only these run with it.
  ['unit tests of the deciders, with coverage', bin('vitest'), [...vitest('unit', 'unit-domain'), 'packages/domain', '--coverage.enabled']],
];
// The integration tier mostly waits on Kafka and PostgreSQL (about 50 s of CPU in 85 s), so it runs
// beside the steps above, which mostly compute, instead of after them: its output is kept in a file
// and shown once they are done.
const integration: [string, string, string[]] = ['integration tests', bin('vitest'), vitest('integration')];
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

const wanted = (name: string) => !only.length || only.some((o) => name.startsWith(o));
const began = Date.now();
const secs = (since: number) => `${((Date.now() - since) / 1000).toFixed(1)} s`;

const background = wanted(integration[0]) ? startIntegration() : null;
for (const [name, cmd, args] of steps) {
  if (!wanted(name)) continue;
  process.stderr.write(`\n== ${name}\n`);
  const started = Date.now();
  const r = spawnSync(cmd, args, { cwd: REPO_ROOT, stdio: 'inherit', env: process.env });
  if (name === 'unit tests') count('unit');
  if (name.startsWith('unit tests of the deciders')) count('unit-domain');
  if (r.status !== 0) {
    background?.stop();
    summary();
    process.stderr.write(`\n== FAILED: ${name} (exit ${r.status ?? r.signal})\n`);
    process.exit(r.status ?? 1);
  }
  process.stderr.write(`== ok: ${name} (${secs(started)})\n`);
}
if (background) {
  process.stderr.write(`\n== ${integration[0]} (started with the steps above; its output follows)\n`);
  const code = await background.done;
  count('integration');
  if (code !== 0) {
    summary();
    process.stderr.write(`\n== FAILED: ${integration[0]} (exit ${code})\n`);
    process.exit(code);
  }
  process.stderr.write(`== ok: ${integration[0]} (${secs(background.started)})\n`);
}
summary();
process.stderr.write(`npm test took ${secs(began)}\n`);

function startIntegration(): { started: number; done: Promise<number>; stop(): void } {
  const [, cmd, args] = integration;
  const logFile = join(reports, 'integration.log');
  const log = openSync(logFile, 'w');
  const started = Date.now();
  const child = spawn(cmd, args, { cwd: REPO_ROOT, stdio: ['ignore', log, log], env: process.env, detached: true });
  const done = new Promise<number>((resolve) =>
    child.on('exit', (code, signal) => {
      closeSync(log);
      process.stderr.write(readFileSync(logFile, 'utf8'));
      resolve(code ?? (signal ? 1 : 0));
    }),
  );
  // A failed step ends the run: the tier's own process group (vitest and its workers) goes too.
  const stop = () => {
    try {
      process.kill(-child.pid!, 'SIGTERM');
    } catch {
      // already gone
    }
  };
  process.on('exit', stop);
  return { started, done, stop };
}
