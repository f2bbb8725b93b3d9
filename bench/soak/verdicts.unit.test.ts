import { describe, expect, it } from 'vitest';
import { burstingShop } from './traffic.ts';
import {
  clientVerdict,
  deadRowsVerdict,
  growth,
  memoryVerdict,
  outboxVerdict,
  p99Verdict,
  percentile,
  quarterAlignedPeriod,
  quarters,
  retainedTableVerdict,
  slopePerHour,
  spanAfterWarmup,
  type Point,
} from './verdicts.ts';

/** One point a minute for `minutes`, value f(t in seconds). */
const series = (minutes: number, f: (t: number) => number): Point[] =>
  Array.from({ length: minutes + 1 }, (_, i) => ({ t: i * 60, v: f(i * 60) }));

describe('spans and quarters', () => {
  it('leaves out the first 10 % as warm-up', () => {
    expect(spanAfterWarmup(600)).toEqual({ from: 60, to: 600 });
  });

  it('takes the first and last quarter of the span after warm-up', () => {
    const q = quarters(
      series(40, (t) => t),
      { from: 240, to: 2400 },
    );
    expect(q.first.map((p) => p.t)).toEqual([240, 300, 360, 420, 480, 540, 600, 660, 720, 780]);
    expect(q.last.at(0)!.t).toBe(1860);
    expect(q.last.at(-1)!.t).toBe(2400);
  });

  it('fits the burst period to the quarters, so the first and the last hold the same burst time', () => {
    for (const [minutes, wanted] of [
      [10, 120],
      [60, 120],
      [75, 180],
      [240, 120],
    ] as const) {
      const durationS = minutes * 60;
      const everyS = quarterAlignedPeriod(durationS, wanted);
      expect(Math.abs(everyS - wanted) / wanted, `${minutes} min`).toBeLessThan(0.35);
      const span = spanAfterWarmup(durationS);
      const q = (span.to - span.from) / 4;
      const burstSeconds = (a: number, b: number) => {
        let n = 0;
        for (let t = a; t < b; t += 0.5) if (burstingShop(t, 8, { everyS, lengthS: 30, factor: 10 }) !== null) n += 0.5;
        return n;
      };
      expect(burstSeconds(span.from, span.from + q), `${minutes} min`).toBeCloseTo(burstSeconds(span.to - q, span.to), 0);
    }
    // What the unfitted 120 s does in 60 minutes: 210 s of bursts in the first quarter, 180 in the last.
    const b = { everyS: 120, lengthS: 30, factor: 10 };
    const secondsOf = (a: number, z: number) =>
      Array.from({ length: (z - a) * 2 }, (_, i) => a + i / 2).filter((t) => burstingShop(t, 8, b) !== null).length / 2;
    expect([secondsOf(360, 1170), secondsOf(2790, 3600)]).toEqual([210, 180]);
  });

  it('falls back to the nearest point when a quarter is shorter than the sampling', () => {
    const q = quarters(
      [
        { t: 0, v: 1 },
        { t: 100, v: 2 },
      ],
      { from: 10, to: 100 },
    );
    expect(q.first).toEqual([{ t: 100, v: 2 }]);
    expect(q.last).toEqual([{ t: 100, v: 2 }]);
  });
});

describe('slope and growth', () => {
  it('is the least-squares slope per hour', () => {
    expect(slopePerHour(series(10, (t) => 100 + t / 60))).toBeCloseTo(60);
    expect(slopePerHour([{ t: 5, v: 1 }])).toBeNull();
  });

  it('compares the means of the quarters', () => {
    const g = growth(
      series(40, (t) => (t < 1200 ? 100 : 110)),
      { from: 0, to: 2400 },
    );
    expect(g.first).toBe(100);
    expect(g.last).toBe(110);
    expect(g.growth).toBeCloseTo(0.1);
  });
});

describe('memoryVerdict', () => {
  const span = spanAfterWarmup(3600);

  it('passes a flat process, whatever it did during warm-up', () => {
    const v = memoryVerdict(
      'gateway-1',
      'RSS',
      series(60, (t) => (t < 300 ? 50 + t : 120 + Math.sin(t) * 2)),
      span,
    );
    expect(v.pass).toBe(true);
  });

  it('fails a leak and names the process and the slope in MB/hour', () => {
    const v = memoryVerdict(
      'projector-2',
      'RSS',
      series(60, (t) => 100 + (t / 3600) * 40),
      span,
    );
    expect(v.pass).toBe(false);
    expect(v.detail).toContain('projector-2');
    expect(v.figures['slope_mb_per_hour']).toBeCloseTo(40, 5);
  });

  it('fails when nothing was sampled rather than passing blind', () => {
    expect(memoryVerdict('gateway-1', 'heap', [], span).pass).toBe(false);
  });
});

describe('p99Verdict', () => {
  it('is the nearest-rank percentile', () => {
    expect(percentile([5, 1, 4, 2, 3], 50)).toBe(3);
    expect(
      percentile(
        Array.from({ length: 100 }, (_, i) => i + 1),
        99,
      ),
    ).toBe(99);
    expect(percentile([], 99)).toBeNull();
  });

  it('allows the last quarter 1.2x the first', () => {
    const first = Array.from({ length: 100 }, () => 10);
    expect(
      p99Verdict(
        first,
        Array.from({ length: 100 }, () => 12),
      ).pass,
    ).toBe(true);
    expect(
      p99Verdict(
        first,
        Array.from({ length: 100 }, () => 13),
      ).pass,
    ).toBe(false);
    expect(p99Verdict([], first).pass).toBe(false);
  });
});

describe('retainedTableVerdict', () => {
  it('passes a table that levels off at rate x retention', () => {
    const rows = series(30, (t) => Math.min(t, 300) * 10);
    expect(retainedTableVerdict('agent_runtime.command_results', rows, 360, 1800).pass).toBe(true);
  });

  it('fails a table the pruner misses', () => {
    const v = retainedTableVerdict(
      'agent_runtime.command_results',
      series(30, (t) => t * 10),
      360,
      1800,
    );
    expect(v.pass).toBe(false);
    expect(v.figures['slope_rows_per_hour']).toBeCloseTo(36_000);
  });

  it('passes an empty table and says when the run was too short to tell', () => {
    expect(
      retainedTableVerdict(
        'agent_runtime.parked_commands',
        series(30, () => 0),
        360,
        1800,
      ).pass,
    ).toBe(true);
    const short = retainedTableVerdict(
      'agent_runtime.request_keys',
      series(5, (t) => t),
      600,
      300,
    );
    expect(short.pass).toBe(false);
    expect(short.detail).toContain('before the retention window');
  });
});

describe('deadRowsVerdict', () => {
  const span = { from: 0, to: 1200 };
  it("passes tables under twice autovacuum's trigger (at least 1000 rows)", () => {
    const v = deadRowsVerdict([{ table: 'a', dead: series(20, () => 900), live: series(20, () => 10) }], span);
    expect(v.pass).toBe(true);
  });

  it('passes a pruned table whose dead rows hold a level between vacuums', () => {
    const v = deadRowsVerdict(
      [{ table: 'agent_runtime.command_requests', dead: series(20, (t) => 3000 + (t % 120) * 5), live: series(20, () => 1000) }],
      span,
    );
    expect(v.pass).toBe(true);
  });

  it('fails a table whose dead rows stay high in the last quarter, naming it', () => {
    const v = deadRowsVerdict([{ table: 'sot.inventory_levels', dead: series(20, (t) => t * 10), live: series(20, () => 1000) }], span);
    expect(v.pass).toBe(false);
    expect(v.detail).toContain('sot.inventory_levels');
  });
});

describe('outboxVerdict', () => {
  it('needs nothing unpublished at the end; the peak is reported', () => {
    expect(outboxVerdict(0, [{ t: 0, v: 40 }]).pass).toBe(true);
    expect(outboxVerdict(0, [{ t: 0, v: 40 }]).figures['peak_backlog']).toBe(40);
    expect(outboxVerdict(3, []).pass).toBe(false);
  });
});

describe('clientVerdict', () => {
  const span = spanAfterWarmup(3600);
  const flat = (v: number) => series(60, () => v);
  it('passes a client whose event loop stayed under the limits after the warm-up', () => {
    const v = clientVerdict(
      series(60, (t) => (t < 300 ? 400 : 20)),
      series(60, (t) => (t < 300 ? 900 : 60)),
      span,
    );
    expect(v.pass).toBe(true);
    expect(v.figures).toEqual({ worst_event_loop_p99_ms: 20, worst_event_loop_max_ms: 60 });
  });
  it('fails on one minute over either limit, and when nothing was measured', () => {
    expect(
      clientVerdict(
        series(60, (t) => (t === 3000 ? 101 : 20)),
        flat(60),
        span,
      ).pass,
    ).toBe(false);
    // stalls the p99 does not show: the run that raised every reply p99 fourfold
    const stalls = clientVerdict(
      flat(20),
      series(60, (t) => (t === 3000 ? 350 : 60)),
      span,
    );
    expect(stalls.pass).toBe(false);
    expect(stalls.detail).toContain('longest stall 350.0 ms');
    expect(clientVerdict([], [], span).pass).toBe(false);
  });
});
