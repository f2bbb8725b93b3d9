// The soak's verdicts from its samples and end checks: which figures each verdict of verdicts.ts is
// given. Runs before the services stop, so that a failure can still take their heap snapshots.
import type { EndChecks } from './checks.ts';
import type { Sample } from './measure.ts';
import {
  clientVerdict,
  deadRowsVerdict,
  memoryVerdict,
  outboxVerdict,
  p99Verdict,
  retainedTableVerdict,
  spanAfterWarmup,
  type Point,
  type Verdict,
} from './verdicts.ts';

/** The agent_runtime tables the pruner keeps to their retention window (services/projector/src/pruner.ts). */
export const PRUNED_TABLES = [
  'agent_runtime.processed_commands',
  'agent_runtime.command_results',
  'agent_runtime.command_requests',
  'agent_runtime.parked_commands',
  'agent_runtime.request_keys',
  'agent_runtime.outbox',
];

const check = (name: string, pass: boolean, detail: string, figures: Verdict['figures'] = {}): Verdict => ({ name, pass, detail, figures });

const series = (samples: Sample[], f: (s: Sample) => number | null | undefined): Point[] =>
  samples.flatMap((s) => {
    const v = f(s);
    return typeof v === 'number' && Number.isFinite(v) ? [{ t: s.t, v }] : [];
  });

export interface JudgeInput {
  samples: Sample[];
  /** [seconds since the load started, reply ms] of every accepted write. */
  replies: [number, number][];
  durationS: number;
  retentionPassedAtS: number;
  end: EndChecks;
  /** The process whose figures say the pruner and upkeep ran (the sum over the projectors). */
  projectors: string[];
}

export function judge(i: JudgeInput): Verdict[] {
  const span = spanAfterWarmup(i.durationS);
  const out: Verdict[] = [];
  for (const name of Object.keys(i.samples[0]?.processes ?? {})) {
    out.push(
      memoryVerdict(
        name,
        'RSS',
        series(i.samples, (s) => s.processes[name]?.rss_mb),
        span,
      ),
    );
    out.push(
      memoryVerdict(
        name,
        'V8 live heap',
        series(i.samples, (s) => s.processes[name]?.heap_live_mb),
        span,
      ),
    );
  }
  const q = (span.to - span.from) / 4;
  const within = (from: number, to: number) => i.replies.filter(([t]) => t >= from && t <= to).map(([, ms]) => ms);
  out.push(p99Verdict(within(span.from, span.from + q), within(span.to - q, span.to)));
  out.push(
    clientVerdict(
      series(i.samples, (s) => s.client?.event_loop_p99_ms),
      series(i.samples, (s) => s.client?.event_loop_max_ms),
      span,
    ),
  );
  for (const table of PRUNED_TABLES)
    out.push(
      retainedTableVerdict(
        table,
        series(i.samples, (s) => s.tables.find((t) => t.table === table)?.rows),
        i.retentionPassedAtS,
        i.durationS,
      ),
    );
  const tables = [...new Set(i.samples.flatMap((s) => s.tables.map((t) => t.table)))];
  out.push(
    deadRowsVerdict(
      tables.map((table) => ({
        table,
        dead: series(i.samples, (s) => s.tables.find((t) => t.table === table)?.dead_rows),
        live: series(i.samples, (s) => s.tables.find((t) => t.table === table)?.live_rows),
      })),
      span,
    ),
  );
  const last = i.samples.at(-1);
  out.push(
    outboxVerdict(
      last?.outbox_unpublished ?? -1,
      series(i.samples, (s) => s.outbox_unpublished),
    ),
  );
  const v = i.end.verify;
  out.push(
    check(
      'lost = doubled = 0 (database and audit topic)',
      v.lost === 0 && v.doubled === 0 && v.eventsMissing === 0,
      `lost ${v.lost}, doubled ${v.doubled}, audit events missing ${v.eventsMissing} (duplicates ${v.eventsDuplicated}, allowed by D5)`,
      { lost: v.lost, doubled: v.doubled },
    ),
  );
  out.push(check('pipeline quiescent at the end', i.end.quiescent.ok, `${i.end.quiescent.detail} after ${i.end.quiescent.ms} ms`));
  out.push(
    check(
      'every request answered as the API says, every accepted command resolved',
      i.end.failures.length === 0,
      i.end.failures.length ? i.end.failures.slice(0, 5).join(' | ') : `${v.requests} checked requests, ${v.accepted} accepted`,
      { failures: i.end.failures.length },
    ),
  );
  out.push(
    check(
      'no error logs (but those the soak provoked)',
      i.end.errorLogs.length === 0,
      `${i.end.errorLogs.length} error line(s), ${i.end.provokedErrorLogs.length} provoked by heap snapshots, ${i.end.warnLogs} warning(s)`,
    ),
  );
  const dates = i.end.dailySnapshots.dates;
  out.push(
    check(
      'the daily snapshot job fired several times',
      dates.length >= 3,
      `${i.end.dailySnapshots.runs} (shop, date) runs over ${dates.length} dates: ${dates.join(', ')}`,
    ),
  );
  const pruned = last ? i.projectors.reduce((acc, p) => acc + (last.processes[p]?.pruned_rows ?? 0), 0) : 0;
  out.push(
    check(
      'the pruner and the table upkeep ran',
      pruned > 0 && i.end.upkeep.vacuums > 0,
      `${pruned} rows pruned, ${i.end.upkeep.vacuums} VACUUMs and ${i.end.upkeep.analyzes} ANALYZEs (pg_stat_user_tables)`,
      { pruned_rows: pruned },
    ),
  );
  return out;
}
