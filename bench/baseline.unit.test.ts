import { describe, expect, it } from 'vitest';
import { compareRounds, figuresOf, renderComparison } from './baseline.ts';
import type { Target } from './report.ts';

const target = (bench: string, what: string, value: number | string): Target => ({ bench, what, value, target: '>= 1', met: null });

describe('a bench against its baseline', () => {
  it('compares the medians of each side, figure by figure, in the order the runs list them', () => {
    const baseline = [
      [target('B6', 'lines/s', 100), target('B1', 'ratio', 0.9)],
      [target('B6', 'lines/s', 120)],
      [target('B6', 'lines/s', 80)],
    ];
    const current = [
      [target('B6', 'lines/s', 200), target('B1', 'ratio', 0.9)],
      [target('B6', 'lines/s', 150)],
      [target('B6', 'lines/s', 210)],
    ];
    expect(compareRounds(baseline, current)).toEqual([
      { bench: 'B6', what: 'lines/s', baseline: [100, 120, 80], current: [200, 150, 210], ratio: 2 },
      { bench: 'B1', what: 'ratio', baseline: [0.9], current: [0.9], ratio: 1 },
    ]);
  });

  it('has no ratio for a figure one side did not measure, or measured as 0', () => {
    const rows = compareRounds(
      [[target('B2', 'req/s', 'not measured'), target('B5', 'cmd/s', 0)]],
      [[target('B2', 'req/s', 40), target('B5', 'cmd/s', 3)]],
    );
    expect(rows.map((r) => r.ratio)).toEqual([null, null]);
    const table = renderComparison([...rows, ...compareRounds([[target('B9', 'rss', 'not measured')]], [[]])], {
      baseline: 'abc',
      current: 'def',
      rounds: 1,
    });
    expect(table).toContain('| B2 | req/s | – | 40 | – |');
    expect(table).not.toContain('B9');
  });

  it('compares the targets and the rates, ratios, latencies and statement counts of each bench, not its settings', () => {
    const figures = figuresOf({
      commit: 'abc',
      targets: [target('B5', 'replay / live', 1.2)],
      B5: { settings: { commands_per_s: 1 }, live: { commands_per_s: 500, commands: 2000, profile: { statements_per_command: 3.4 } } },
      B9: null,
    });
    expect(figures.map((f) => [f.bench, f.what, f.value])).toEqual([
      ['B5', 'replay / live', 1.2],
      ['B5', 'live.commands_per_s', 500],
      ['B5', 'live.profile.statements_per_command', 3.4],
    ]);
  });
});
