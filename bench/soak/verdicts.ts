// The soak's verdicts, as small pure functions of the samples (unit-tested in verdicts.unit.test.ts):
// what "no leak", "no slowdown", "retention holds" and "dead rows bounded" mean in numbers.

/** One sampled value at `t` seconds since the load started. */
export interface Point {
  t: number;
  v: number;
}

export interface Verdict {
  name: string;
  pass: boolean;
  detail: string;
  /** The figures the verdict was decided on. */
  figures: Record<string, number | null>;
}

/** The span the verdicts compare: after the warm-up (the first `warmupFraction` of the run) to the end. */
export interface Span {
  from: number;
  to: number;
}

export const spanAfterWarmup = (durationS: number, warmupFraction = 0.1): Span => ({ from: durationS * warmupFraction, to: durationS });

/**
 * The burst period nearest to `wantedS` that fits a whole number of times into a quarter of the span
 * the verdicts compare. Bursts repeat with this period, so the first and the last quarter then hold
 * the same share of burst time: with 120 s in a 60-minute run the first quarter held 210 s of
 * bursts and the last 180 s, and the p99 verdict would have compared bursts, not the service.
 */
export function quarterAlignedPeriod(durationS: number, wantedS: number, warmupFraction = 0.1): number {
  const span = spanAfterWarmup(durationS, warmupFraction);
  const quarter = (span.to - span.from) / 4;
  return quarter / Math.max(1, Math.round(quarter / wantedS));
}

const mean = (xs: number[]): number | null => (xs.length ? xs.reduce((s, x) => s + x, 0) / xs.length : null);

/** The points of the first and of the last quarter of `span` (a quarter with no point takes the nearest one). */
export function quarters(points: Point[], span: Span): { first: Point[]; last: Point[] } {
  const inSpan = points.filter((p) => p.t >= span.from && p.t <= span.to).sort((a, b) => a.t - b.t);
  const q = (span.to - span.from) / 4;
  let first = inSpan.filter((p) => p.t <= span.from + q);
  let last = inSpan.filter((p) => p.t >= span.to - q);
  if (!first.length && inSpan.length) first = [inSpan[0]!];
  if (!last.length && inSpan.length) last = [inSpan.at(-1)!];
  return { first, last };
}

/** Least-squares slope of the points, in units per hour (null below two distinct times). */
export function slopePerHour(points: Point[]): number | null {
  if (points.length < 2) return null;
  const mt = mean(points.map((p) => p.t))!;
  const mv = mean(points.map((p) => p.v))!;
  const den = points.reduce((s, p) => s + (p.t - mt) ** 2, 0);
  if (den === 0) return null;
  return (points.reduce((s, p) => s + (p.t - mt) * (p.v - mv), 0) / den) * 3600;
}

/** Mean of the last quarter over the mean of the first, minus one (0.1 = grew 10 %). */
export function growth(points: Point[], span: Span): { first: number | null; last: number | null; growth: number | null } {
  const { first, last } = quarters(points, span);
  const f = mean(first.map((p) => p.v));
  const l = mean(last.map((p) => p.v));
  return { first: f, last: l, growth: f === null || l === null || f === 0 ? null : l / f - 1 };
}

/**
 * A memory figure (RSS or V8 heap used, MB) of one process: grew at most `limit` (10 %) from the first
 * to the last quarter after the warm-up. A failure names the process and the slope in MB/hour.
 */
export function memoryVerdict(process: string, what: string, points: Point[], span: Span, limit = 0.1): Verdict {
  const g = growth(points, span);
  const slope = slopePerHour(points.filter((p) => p.t >= span.from && p.t <= span.to));
  const pass = g.growth !== null && g.growth <= limit;
  const fmt = (x: number | null, d = 1) => (x === null ? 'n/a' : x.toFixed(d));
  return {
    name: `${what} growth of ${process} <= ${limit * 100} %`,
    pass,
    detail: `${fmt(g.first)} -> ${fmt(g.last)} MB (${g.growth === null ? 'not measured' : `${(g.growth * 100).toFixed(1)} %`}), slope ${fmt(slope)} MB/hour${pass ? '' : `: possible leak in ${process}`}`,
    figures: { first_mb: g.first, last_mb: g.last, growth: g.growth, slope_mb_per_hour: slope },
  };
}

/** The p-th percentile (0..100) of `values`, nearest rank; null when empty. */
export function percentile(values: number[], p: number): number | null {
  if (!values.length) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** Reply p99 (ms) of the last quarter at most `limit` (1.2) times the first quarter's. */
export function p99Verdict(firstQuarterMs: number[], lastQuarterMs: number[], limit = 1.2): Verdict {
  const f = percentile(firstQuarterMs, 99);
  const l = percentile(lastQuarterMs, 99);
  const ratio = f === null || l === null || f === 0 ? null : l / f;
  return {
    name: `reply p99 last quarter <= ${limit}x first`,
    pass: ratio !== null && ratio <= limit,
    detail: `${f ?? 'n/a'} -> ${l ?? 'n/a'} ms (${ratio === null ? 'not measured' : `${ratio.toFixed(2)}x`}; ${firstQuarterMs.length} and ${lastQuarterMs.length} replies)`,
    figures: { first_p99_ms: f, last_p99_ms: l, ratio },
  };
}

/**
 * A pruned table (agent_runtime.*) does not grow once its retention window has passed once: the
 * mean row count of the last quarter of [retentionPassedAt, end] at most `limit` (1.25) times the
 * first quarter's. Steady load keeps about rate × retention rows; a table the pruner misses grows
 * linearly.
 */
export function retainedTableVerdict(table: string, rows: Point[], retentionPassedAtS: number, endS: number, limit = 1.25): Verdict {
  const span = { from: retentionPassedAtS, to: endS };
  const g = growth(rows, span);
  const ratio = g.growth === null ? null : 1 + g.growth;
  const enough = endS - retentionPassedAtS > 0 && rows.some((p) => p.t >= retentionPassedAtS);
  return {
    name: `${table} not growing after the retention window`,
    pass: enough && (ratio === null ? (g.first ?? 0) === 0 && (g.last ?? 0) === 0 : ratio <= limit),
    detail: !enough
      ? `the run ended before the retention window (${retentionPassedAtS.toFixed(0)} s) passed`
      : `${g.first?.toFixed(0) ?? 'n/a'} -> ${g.last?.toFixed(0) ?? 'n/a'} rows (${ratio === null ? 'empty' : `${ratio.toFixed(2)}x`}, limit ${limit}x)`,
    figures: {
      first_rows: g.first,
      last_rows: g.last,
      ratio,
      slope_rows_per_hour: slopePerHour(rows.filter((p) => p.t >= retentionPassedAtS)),
    },
  };
}

/** autovacuum's default trigger for a table of `live` rows: 50 + 20 % of it. */
export const vacuumThreshold = (live: number): number => 50 + 0.2 * live;

/**
 * Dead rows are bounded: a table fails when, in the last quarter, its dead rows exceed both `factor`
 * (2) times autovacuum's trigger (at least `floor` rows) and `growthLimit` (1.5) times its most in the
 * first quarter. Pruning leaves a prune interval's deletes dead until the next VACUUM (a minute
 * apart at most by autovacuum_naptime), a level that holds; dead rows that keep climbing are a table
 * nothing vacuums.
 */
export function deadRowsVerdict(
  tables: { table: string; dead: Point[]; live: Point[] }[],
  span: Span,
  o: { factor?: number; floor?: number; growthLimit?: number } = {},
): Verdict {
  const factor = o.factor ?? 2;
  const floor = o.floor ?? 1000;
  const growthLimit = o.growthLimit ?? 1.5;
  const over: string[] = [];
  let worst = 0;
  for (const t of tables) {
    const { first, last } = quarters(t.dead, span);
    const { last: live } = quarters(t.live, span);
    const bound = Math.max(
      floor,
      factor * vacuumThreshold(Math.max(0, ...live.map((p) => p.v))),
      growthLimit * Math.max(0, ...first.map((p) => p.v)),
    );
    const max = Math.max(0, ...last.map((p) => p.v));
    worst = Math.max(worst, max / bound);
    if (max > bound) over.push(`${t.table}: ${max} dead rows > ${bound.toFixed(0)}`);
  }
  return {
    name: 'dead rows bounded',
    pass: over.length === 0,
    detail: over.length
      ? over.join('; ')
      : `every table under max(${floor}, ${factor} x autovacuum's trigger, ${growthLimit} x its first quarter) in the last quarter`,
    figures: { worst_ratio_to_bound: worst, tables_over: over.length },
  };
}

/** The outbox is drained at the end (nothing unpublished once the load stopped and the pipeline was quiescent). */
export function outboxVerdict(unpublishedAtEnd: number, backlogSamples: Point[]): Verdict {
  const peak = Math.max(0, ...backlogSamples.map((p) => p.v));
  return {
    name: 'outbox drained',
    pass: unpublishedAtEnd === 0,
    detail: `${unpublishedAtEnd} unpublished at the end (peak ${peak} in a sample)`,
    figures: { unpublished_at_end: unpublishedAtEnd, peak_backlog: peak },
  };
}

/**
 * The soak's own client kept up: after the warm-up, its event-loop delay p99 at most `p99LimitMs` (100)
 * and its longest stall at most `maxLimitMs` (250) in every sample. Reply times are measured in the
 * client's event loop, so a stall (its own collections, too much to do) is added to every reply in
 * flight: a few stalls of 150-350 ms a minute, invisible in the delay's p99, raised the reply p99 of
 * every endpoint fourfold in a 60-minute run (spool.ts).
 */
export function clientVerdict(loopP99Ms: Point[], loopMaxMs: Point[], span: Span, p99LimitMs = 100, maxLimitMs = 250): Verdict {
  const worst = (ps: Point[]) => {
    const inSpan = ps.filter((p) => p.t >= span.from && p.t <= span.to);
    return inSpan.length ? Math.max(...inSpan.map((p) => p.v)) : null;
  };
  const p99 = worst(loopP99Ms);
  const max = worst(loopMaxMs);
  return {
    name: `the soak's client kept up (event-loop p99 <= ${p99LimitMs} ms and no stall over ${maxLimitMs} ms in any minute)`,
    pass: p99 !== null && max !== null && p99 <= p99LimitMs && max <= maxLimitMs,
    detail: p99 === null || max === null ? 'not measured' : `worst minute: p99 ${p99.toFixed(1)} ms, longest stall ${max.toFixed(1)} ms`,
    figures: { worst_event_loop_p99_ms: p99, worst_event_loop_max_ms: max },
  };
}
