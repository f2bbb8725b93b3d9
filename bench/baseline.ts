// `npm run bench -- --baseline <commit>`: the selected benches (BENCH_ONLY, BENCH_QUICK, ...) on this
// checkout and on <commit>, interleaved round by round (ABBA), with the ratio new / baseline of each
// headline figure. Absolute rates move up to 2x between runs on a shared 2-core machine; two builds
// measured side by side in the same minutes do not, which is what a change's effect needs.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '@ingest/devstack';
import { envInt } from '@ingest/runtime';
import { gitHead, median, round, say } from './lib/util.ts';
import type { Target } from './report.ts';

export interface BaselineRow {
  bench: string;
  what: string;
  baseline: number[];
  current: number[];
  /** Median of the current rounds / median of the baseline rounds; null when either has no number. */
  ratio: number | null;
}

/** The figures of both sides, matched by bench and description; only numeric values count. */
export function compareRounds(baseline: Target[][], current: Target[][]): BaselineRow[] {
  const key = (t: Target) => `${t.bench}\u0000${t.what}`;
  const values = (runs: Target[][], k: string) =>
    runs.flatMap((targets) => targets.filter((t) => key(t) === k && typeof t.value === 'number').map((t) => t.value as number));
  const order = [...new Set([...current, ...baseline].flat().map(key))];
  return order.map((k) => {
    const [bench = '', what = ''] = k.split('\u0000');
    const b = values(baseline, k);
    const c = values(current, k);
    const base = b.length ? median(b) : null;
    const ratio = base !== null && base !== 0 && c.length ? round(median(c) / base, 3) : null;
    return { bench, what, baseline: b, current: c, ratio };
  });
}

export function renderComparison(rows: BaselineRow[], meta: { baseline: string; current: string; rounds: number }): string {
  const num = (xs: number[]) => (xs.length ? xs.map((x) => round(x, 2)).join(' · ') : '–');
  return [
    `# Benchmarks against a baseline`,
    '',
    `current ${meta.current} vs baseline ${meta.baseline}, ${meta.rounds} round(s) each, interleaved (ABBA).`,
    '',
    '| bench | figure | baseline (each round) | current (each round) | current / baseline (medians) |',
    '|---|---|---|---|---:|',
    // A figure neither side measured (a bench not selected) is left out.
    ...rows
      .filter((r) => r.baseline.length || r.current.length)
      .map((r) => `| ${r.bench} | ${r.what} | ${num(r.baseline)} | ${num(r.current)} | ${r.ratio ?? '–'} |`),
    '',
  ].join('\n');
}

/** A worktree of `rev` with its dependencies installed, made once per commit under .data/. */
function baselineCheckout(rev: string): { dir: string; commit: string } {
  const parsed = spawnSync('git', ['rev-parse', '--verify', `${rev}^{commit}`], { cwd: REPO_ROOT, encoding: 'utf8' });
  if (parsed.status !== 0) throw new Error(`--baseline ${rev}: not a commit of this repository`);
  const commit = parsed.stdout.trim();
  const dir = join(REPO_ROOT, '.data', 'bench-baseline', commit.slice(0, 12));
  if (!existsSync(join(dir, 'package.json'))) {
    say(`baseline: checking out ${commit.slice(0, 12)} into ${dir}`);
    const add = spawnSync('git', ['worktree', 'add', '--detach', '--force', dir, commit], { cwd: REPO_ROOT, stdio: 'inherit' });
    if (add.status !== 0) throw new Error(`git worktree add ${dir} failed`);
  }
  say('baseline: installing its dependencies');
  const install = spawnSync(process.execPath, [join(dir, 'scripts', 'bootstrap.mjs'), '--pnpm', 'install', '--frozen-lockfile'], {
    cwd: dir,
    stdio: 'inherit',
  });
  if (install.status !== 0) throw new Error(`installing the baseline's dependencies failed`);
  return { dir, commit };
}

/** Leaves of a bench's results worth comparing besides its targets: rates, ratios, latencies, statements. */
const HEADLINE = /(per_s|ratio[a-z_0-9]*|p50_ms|p99_ms|statements_per_command|ms_per_request|ms_per_command)$/;

/** The targets of a run and the headline leaves of each bench's figures (`B5 live.commands_per_s`). */
export function figuresOf(results: Record<string, unknown>): Target[] {
  const out: Target[] = [...((results['targets'] as Target[] | undefined) ?? [])];
  const walk = (bench: string, path: string[], v: unknown): void => {
    if (path.includes('settings')) return;
    if (typeof v === 'number' && HEADLINE.test(path[path.length - 1] ?? ''))
      out.push({ bench, what: path.join('.'), value: v, target: '', met: null });
    else if (v && typeof v === 'object' && !Array.isArray(v)) for (const [k, x] of Object.entries(v)) walk(bench, [...path, k], x);
  };
  for (const [key, v] of Object.entries(results)) if (/^B\d+$/.test(key)) walk(key, [], v);
  return out;
}

/** One run of `npm run bench` in `root` into `resultsDir`: its figures, or [] when it wrote none. */
function benchOnce(root: string, resultsDir: string): Target[] {
  mkdirSync(resultsDir, { recursive: true });
  const r = spawnSync(process.execPath, [join(root, 'scripts', 'bootstrap.mjs'), join(root, 'bench', 'run.ts')], {
    cwd: root,
    env: { ...process.env, BENCH_RESULTS_DIR: resultsDir },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  if (r.status !== 0) say(`bench in ${root} exited ${r.status}: its figures are used as far as it wrote them`);
  const file = join(resultsDir, 'latest.json');
  return existsSync(file) ? figuresOf(JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>) : [];
}

export function runAgainstBaseline(rev: string): void {
  const rounds = envInt(process.env, 'BENCH_BASELINE_ROUNDS', 3, 1);
  const { dir, commit } = baselineCheckout(rev);
  const head = gitHead(REPO_ROOT);
  const out = join(process.env['BENCH_RESULTS_DIR'] ?? join(REPO_ROOT, 'bench', 'results'), 'baseline');
  const runsDir = join(REPO_ROOT, '.data', 'bench-baseline', 'runs', new Date().toISOString().replace(/[:.]/g, '-'));
  const baseline: Target[][] = [];
  const current: Target[][] = [];
  for (let i = 1; i <= rounds; i++) {
    // ABBA: the order flips every round, so neither side always runs on a warmer (or more tired) machine.
    const sides = i % 2 === 1 ? (['baseline', 'current'] as const) : (['current', 'baseline'] as const);
    for (const side of sides) {
      say(`baseline round ${i}/${rounds}: ${side}`);
      const targets = benchOnce(side === 'baseline' ? dir : REPO_ROOT, join(runsDir, `${side}-${i}`));
      (side === 'baseline' ? baseline : current).push(targets);
    }
  }
  const rows = compareRounds(baseline, current);
  const meta = { baseline: commit, current: `${head.commit}${head.dirty ? ' (dirty tree)' : ''}`, rounds };
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, 'latest.json'), `${JSON.stringify({ ...meta, date: new Date().toISOString(), rows }, null, 2)}\n`);
  writeFileSync(join(out, 'latest.md'), renderComparison(rows, meta));
  say(`wrote ${join(out, 'latest.json')} and latest.md (each run's own results under ${runsDir})`);
  for (const r of rows.filter((x) => x.ratio !== null)) say(`${r.bench} ${r.what}: current / baseline ${r.ratio}`);
}
