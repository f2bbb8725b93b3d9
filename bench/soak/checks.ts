// The end of a soak: the pipeline quiescent, then nothing lost or doubled (the fault suite's
// verify.ts: the database and the audit topic), the endpoints it does not know checked here, and
// the services' error logs read.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { getCommand, verify, waitQuiescent, type Verdict as Checked } from '../../tests/faults/verify.ts';
import type { Deployment } from './stack.ts';
import type { Traffic } from './traffic.ts';

export interface EndChecks {
  quiescent: { ok: boolean; ms: number; detail: string };
  verify: Omit<Checked, 'lost' | 'doubled'> & { lost: number; doubled: number; lostExamples: string[]; doubledExamples: string[] };
  failures: string[];
  info: string[];
  dailySnapshots: { runs: number; dates: string[] };
  upkeep: { vacuums: number; analyzes: number };
  errorLogs: string[];
  provokedErrorLogs: string[];
  warnLogs: number;
}

/**
 * A heap snapshot stops a process for seconds, past the consumer group's session timeout: kafkajs
 * then logs its heartbeat and commit refused at level error while the group rebalances. Provoked by
 * the soak's own snapshots, so set apart (and still listed) when snapshots were taken.
 */
export const SNAPSHOT_PAUSE_ERRORS =
  /"component":"kafka".*(not aware of this member|rebalanc|Response (Heartbeat|OffsetCommit|JoinGroup|SyncGroup))/;

/** Lines of level error or fatal (pino: 50, 60) in the services' logs; warnings counted. */
export function readLogs(dir: string, snapshotsTaken = false): { errors: string[]; provoked: string[]; warns: number } {
  const errors: string[] = [];
  const provoked: string[] = [];
  let warns = 0;
  for (const f of readdirSync(dir).filter((n) => /^(gateway|projector)-\d+\.log$/.test(n)))
    for (const line of readFileSync(join(dir, f), 'utf8').split('\n')) {
      const level = /"level":(\d+)/.exec(line)?.[1];
      if (level === '40') warns += 1;
      if (level === '50' || level === '60')
        (snapshotsTaken && SNAPSHOT_PAUSE_ERRORS.test(line) ? provoked : errors).push(`${f}: ${line.slice(0, 400)}`);
    }
  return { errors, provoked, warns };
}

export async function endChecks(d: Deployment, t: Traffic, runDir: string, snapshotsTaken: boolean): Promise<EndChecks> {
  const quiescent = await waitQuiescent(d.stack, d.stack.groupId, 180_000);
  const gw = d.gateways[0]!;
  // A 202'd command seen resolved while the soak ran may be pruned by now (RESULT_RETENTION is minutes
  // here, and 410 `expired` is then its right answer): its live resolution is what counts.
  const finalGet = async (id: string) => (t.resolved.has(id) ? { status: 200, body: null } : getCommand(gw.port, id));
  const v = await verify(d.stack, await t.sent.readAll(), d.shops, { finalGet, connectionErrorsExpected: false });
  const failures = [...v.failures, ...t.failures];
  const info = [...v.info];
  const shops = d.shops.map((s) => s.shop);

  const dry = await d.stack.db.query<{ n: number }>('SELECT count(*)::int AS n FROM public.products WHERE barcode = ANY($1)', [
    t.dryBarcodes,
  ]);
  if (dry.rows[0]!.n > 0) failures.push(`${dry.rows[0]!.n} product(s) of dry runs were written`);
  info.push(`${t.dryBarcodes.length} product dry runs left no product`);

  const orders = await d.stack.db.query<{ id: string; n: number }>(
    'SELECT transaction_id AS id, count(*)::int AS n FROM public.order_line_master WHERE shop = ANY($1) GROUP BY transaction_id',
    [shops],
  );
  const stored = new Map(orders.rows.map((r) => [r.id, r.n]));
  let orderLost = 0;
  for (const [id, rows] of t.orders) if ((stored.get(id) ?? 0) !== rows) orderLost += 1;
  if (orderLost) failures.push(`${orderLost} of ${t.orders.size} accepted order transactions not stored exactly once`);
  info.push(`${t.orders.size} order transactions accepted, each stored once: ${orderLost === 0}`);

  const runs = await d.stack.db.query<{ snapshot_date: string }>(
    `SELECT to_char(snapshot_date, 'YYYY-MM-DD') AS snapshot_date FROM agent_runtime.daily_snapshot_runs WHERE shop = ANY($1)`,
    [shops],
  );
  const dates = [...new Set(runs.rows.map((r) => r.snapshot_date))].sort();
  const upkeep = await d.stack.db.query<{ v: number; a: number }>(
    `SELECT sum(vacuum_count + autovacuum_count)::int AS v, sum(analyze_count + autoanalyze_count)::int AS a FROM pg_stat_user_tables`,
  );
  const logs = readLogs(runDir, snapshotsTaken);
  if (logs.provoked.length)
    info.push(`${logs.provoked.length} kafkajs error line(s) of rebalances while a heap snapshot paused a projector (provoked)`);
  const { lost, doubled, ...rest } = v;
  return {
    quiescent,
    verify: { ...rest, lost: lost.length, doubled: doubled.length, lostExamples: lost.slice(0, 10), doubledExamples: doubled.slice(0, 10) },
    failures,
    info,
    dailySnapshots: { runs: runs.rows.length, dates },
    upkeep: { vacuums: upkeep.rows[0]?.v ?? 0, analyzes: upkeep.rows[0]?.a ?? 0 },
    errorLogs: logs.errors.slice(0, 50),
    provokedErrorLogs: logs.provoked.slice(0, 20),
    warnLogs: logs.warns,
  };
}
