// `npm run test:faults [-- [--cluster] <scenario name>...]`: the fault suite (docs/operations.md#fault-suite-npm-run-testfaults). Real processes,
// real kill -9s, a real broker of its own and a real PostgreSQL outage (through a proxy), all on
// 127.0.0.1. `--cluster` runs on a three-node cluster of its own (replication 3, min ISR 2)
// instead of one broker; without names it runs the scenarios that need the cluster (leader-kill). Prints one row per scenario and exits 1 when any lost or doubled a write, answered a
// 5xx other than 503 with Retry-After, failed a check of its own, or did not recover.
// Logs: .data/faults/<run>/<scenario>/{gateway-*,projector-*}.log and timeline.log.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '@ingest/devstack';
import { finish, makeCtx, type Result, type Suite } from './harness.ts';
import { migrateTemplate, startOwnBroker, startOwnCluster } from './infra.ts';
import { SCENARIOS } from './scenarios/index.ts';

const say = (m: string) => process.stderr.write(`[faults] ${m}\n`);
const runId = new Date().toISOString().replace(/[:.]/g, '-');
const runDir = join(REPO_ROOT, '.data', 'faults', runId);
mkdirSync(runDir, { recursive: true });

const args = process.argv.slice(2);
const onCluster = args.includes('--cluster');
const wanted = args.filter((a) => a !== '--cluster');
const unknown = wanted.filter((w) => !SCENARIOS.some((s) => s.name === w));
if (unknown.length) {
  say(`unknown scenario(s): ${unknown.join(', ')}; known: ${SCENARIOS.map((s) => s.name).join(', ')}`);
  process.exit(2);
}
const chosen = wanted.length
  ? SCENARIOS.filter((s) => wanted.includes(s.name))
  : SCENARIOS.filter((s) => Boolean(s.needsCluster) === onCluster);
const misplaced = chosen.filter((s) => s.needsCluster && !onCluster);
if (misplaced.length) {
  say(
    `${misplaced.map((s) => s.name).join(', ')} need(s) the three-node cluster: npm run test:faults -- --cluster ${misplaced.map((s) => s.name).join(' ')}`,
  );
  process.exit(2);
}

function table(results: Result[]): string {
  const head = [
    'scenario',
    'requests',
    'accepted (200/202)',
    'unknown',
    'lost',
    'doubled',
    '5xx other than 503',
    '503s (all with Retry-After?)',
    'recovery (s)',
    'result',
  ];
  const rows = results.map((r) => [
    r.name,
    String(r.requests),
    String(r.accepted),
    String(r.unknown),
    String(r.lost),
    String(r.doubled),
    String(r.fiveXX),
    r.status503 === 0
      ? '0'
      : `${r.status503} (${r.status503WithRetryAfter === r.status503 ? 'yes' : `no: ${r.status503 - r.status503WithRetryAfter} without`})`,
    r.recoveryS === null ? 'not recovered' : `${r.recoveryS.toFixed(1)} (limit ${r.recoveryLimitS})`,
    r.pass ? 'pass' : 'FAIL',
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(head), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}

const emptyResult = (name: string): Result => ({
  name,
  requests: 0,
  accepted: 0,
  unknown: 0,
  lost: 0,
  doubled: 0,
  fiveXX: 0,
  status503: 0,
  status503WithRetryAfter: 0,
  recoveryS: null,
  recoveryLimitS: 0,
  pass: false,
  failures: [],
  info: [],
  seconds: 0,
  logDir: '',
  database: '',
  eventsDuplicated: 0,
});

const t0 = Date.now();
const results: Result[] = [];
// Every wait in the suite is bounded; this is the bound of the whole (services die with us).
const deadlineMin = Number(process.env['FAULTS_DEADLINE_MIN'] ?? 20);
setTimeout(() => {
  say(`the suite ran over ${deadlineMin} minutes; giving up (logs in ${runDir})`);
  process.exit(1);
}, deadlineMin * 60_000).unref();
// Ctrl-C: exit through process.exit so the 'exit' hooks kill the services and the broker.
for (const sig of ['SIGINT', 'SIGTERM'] as const)
  process.on(sig, () => {
    say(`${sig}: stopping (logs in ${runDir})`);
    process.exit(130);
  });
say(`run ${runId}: ${chosen.map((s) => s.name).join(', ')}; logs in ${runDir}`);
const broker = onCluster ? await startOwnCluster(3, (m) => say(m)) : await startOwnBroker((m) => say(m));
let template: Awaited<ReturnType<typeof migrateTemplate>> | null = null;
try {
  template = await migrateTemplate();
  const suite: Suite = { runDir, broker, template };
  for (const s of chosen) {
    say(`${s.name}: ${s.what}`);
    let result: Result;
    const ctx = await makeCtx(s.name, suite).catch((err: unknown) => err as Error);
    if (ctx instanceof Error) {
      say(`${s.name}: could not set up its stack: ${ctx.stack ?? ctx.message}`);
      results.push({
        ...emptyResult(s.name),
        failures: [`setting up the scenario's stack failed: ${ctx.message}`],
        logDir: join(runDir, s.name),
      });
      continue;
    }
    try {
      const outcome = await s.run(ctx);
      result = await finish(ctx, outcome);
    } catch (err) {
      const msg = err instanceof Error ? (err.stack ?? err.message) : String(err);
      ctx.note(`scenario crashed: ${msg}`);
      await ctx.host.stopAll().catch(() => {});
      await ctx.stack.dispose(true).catch(() => {});
      result = {
        ...emptyResult(s.name),
        failures: [`the scenario itself failed: ${msg}`],
        seconds: (Date.now() - ctx.t0) / 1000,
        logDir: ctx.dir,
        database: ctx.stack.dbName,
      };
    }
    results.push(result);
    writeFileSync(join(ctx.dir, 'result.json'), `${JSON.stringify({ ...result, timeline: ctx.timeline }, null, 2)}\n`);
    say(`${s.name}: ${result.pass ? 'pass' : 'FAIL'} in ${result.seconds.toFixed(0)} s`);
  }
} finally {
  await broker.stop().catch(() => {});
  await template?.drop().catch(() => {});
}

const out: string[] = ['', table(results), ''];
for (const r of results) {
  out.push(`${r.name} (${r.seconds.toFixed(0)} s, logs ${r.logDir}${r.pass ? '' : `, database ${r.database} kept`}):`);
  for (const f of r.failures.slice(0, 25)) out.push(`  FAIL ${f}`);
  if (r.failures.length > 25) out.push(`  … ${r.failures.length - 25} more in ${join(r.logDir, 'result.json')}`);
  for (const i of r.info) out.push(`  · ${i}`);
}
out.push(
  '',
  `total ${((Date.now() - t0) / 1000).toFixed(0)} s; ${results.filter((r) => !r.pass).length} of ${results.length} scenario(s) failed`,
);
const report = out.join('\n');
writeFileSync(join(runDir, 'report.txt'), `${report}\n`);
console.log(report);
process.exit(results.length > 0 && results.every((r) => r.pass) ? 0 : 1);
