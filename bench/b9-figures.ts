// B9's figures from the samples of one straight replay: rate by tenth of the log, memory after the
// warm-up (the first 10 % of the log) with its slope against the log, CPU on both sides, WAL, and
// what 10 M and 100 M commands would take at the rate measured over the second half.
import type { ProcessSample } from './lib/processSampler.ts';
import { round } from './lib/util.ts';

export interface ReplayFigures {
  commands: number;
  seconds: number;
  commands_per_s: number;
  lines_per_s: number;
  /** Commands per second over each tenth of the log (flat when nothing grows with the log). */
  commands_per_s_by_tenth: number[];
  rss_mb: { after_warmup: number; max: number; end: number; slope_mb_per_100k_commands: number };
  heap_used_mb: { after_warmup: number; max: number; end: number; slope_mb_per_100k_commands: number } | null;
  cpu_seconds: { replay_process: number; postgres_backends: number };
  wal_bytes: number;
  wal_bytes_per_command: number;
  /** Hours at the second half's rate. */
  extrapolated_hours: { '10M': number; '100M': number };
  /** At most 240 points (t s, commands done, RSS MB, heap MB) for a chart. */
  series: Array<[number, number, number, number | null]>;
}

/** Least-squares slope of y over x. */
function slope(points: Array<[number, number]>): number {
  const n = points.length;
  if (n < 2) return 0;
  const mx = points.reduce((s, p) => s + p[0], 0) / n;
  const my = points.reduce((s, p) => s + p[1], 0) / n;
  const num = points.reduce((s, p) => s + (p[0] - mx) * (p[1] - my), 0);
  const den = points.reduce((s, p) => s + (p[0] - mx) ** 2, 0);
  return den === 0 ? 0 : num / den;
}

function memory(samples: ProcessSample[], pick: (s: ProcessSample) => number | null, doneOf: (s: ProcessSample) => number) {
  const points = samples.flatMap((s) => {
    const v = pick(s);
    return v === null ? [] : [[doneOf(s), v] as [number, number]];
  });
  if (points.length === 0) return null;
  return {
    after_warmup: round(points[0]![1], 1),
    max: round(Math.max(...points.map((p) => p[1])), 1),
    end: round(points.at(-1)![1], 1),
    slope_mb_per_100k_commands: round(slope(points) * 100_000, 2),
  };
}

export function replayFigures(
  run: { samples: ProcessSample[]; seconds: number; pgCpuSeconds: number; walBytes: number; doneLine: string | null },
  log: { commands: number; lines: number },
): ReplayFigures {
  const done = (s: ProcessSample) => s.gauges['replay_commands_done'] ?? 0;
  const withProgress = run.samples.filter((s) => done(s) > 0);
  // The replayer's own count of seconds (from its start to the end of the log), from its last line.
  const reported = /in ([0-9.]+) s/.exec(run.doneLine ?? '')?.[1];
  const seconds = reported ? Number(reported) : run.seconds;
  const rate = log.commands / seconds;
  const byTenth: number[] = [];
  for (let k = 1; k <= 10; k++) {
    const from = withProgress.find((s) => done(s) >= ((k - 1) * log.commands) / 10);
    const to = withProgress.find((s) => done(s) >= (k * log.commands) / 10) ?? withProgress.at(-1);
    byTenth.push(from && to && to.t > from.t ? round((done(to) - done(from)) / (to.t - from.t), 0) : 0);
  }
  const half = withProgress.find((s) => done(s) >= log.commands / 2);
  const last = withProgress.at(-1);
  const secondHalfRate = half && last && last.t > half.t ? (done(last) - done(half)) / (last.t - half.t) : rate;
  const warm = withProgress.filter((s) => done(s) >= log.commands / 10);
  const step = Math.max(1, Math.ceil(run.samples.length / 240));
  const cpu = run.samples.at(-1)?.cpu_s ?? 0;
  return {
    commands: log.commands,
    seconds: round(seconds, 1),
    commands_per_s: round(rate, 1),
    lines_per_s: round(log.lines / seconds, 0),
    commands_per_s_by_tenth: byTenth,
    rss_mb: memory(warm, (s) => s.rss_mb, done) ?? { after_warmup: 0, max: 0, end: 0, slope_mb_per_100k_commands: 0 },
    heap_used_mb: memory(warm, (s) => s.heap_used_mb, done),
    cpu_seconds: { replay_process: round(cpu, 1), postgres_backends: round(run.pgCpuSeconds, 1) },
    wal_bytes: run.walBytes,
    wal_bytes_per_command: round(run.walBytes / log.commands, 0),
    extrapolated_hours: { '10M': round(10_000_000 / secondHalfRate / 3600, 2), '100M': round(100_000_000 / secondHalfRate / 3600, 1) },
    series: run.samples
      .filter((_, i) => i % step === 0)
      .map((s) => [round(s.t, 0), done(s), round(s.rss_mb, 1), s.heap_used_mb === null ? null : round(s.heap_used_mb, 1)]),
  };
}
