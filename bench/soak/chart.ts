// The soak's chart: memory, reply p99, projector lag and table sizes over time, one panel each,
// drawn with Vega-Lite and rendered to SVG by vega's headless View (no browser, no canvas).
import * as vega from 'vega';
import * as vl from 'vega-lite';
import type { Sample } from './measure.ts';

type Row = { minute: number; series: string; value: number };

const panel = (title: string, y: string, rows: Row[], scale?: { type: 'symlog' }) => ({
  title,
  width: 720,
  height: 170,
  data: { values: rows },
  mark: { type: 'line', point: true, strokeWidth: 1.5 },
  encoding: {
    x: { field: 'minute', type: 'quantitative', title: 'minutes since the load started' },
    y: { field: 'value', type: 'quantitative', title: y, ...(scale ? { scale } : {}) },
    color: { field: 'series', type: 'nominal', title: null, legend: { orient: 'right', labelLimit: 260 } },
  },
});

/** The long-format rows of each panel (exported for the markdown's own figures and for tests). */
export function chartRows(samples: Sample[]) {
  const minute = (s: Sample) => Math.round((s.t / 60) * 100) / 100;
  const rows = (f: (s: Sample) => [string, number | null | undefined][]): Row[] =>
    samples.flatMap((s) =>
      f(s).flatMap(([series, v]) => (typeof v === 'number' && Number.isFinite(v) ? [{ minute: minute(s), series, value: v }] : [])),
    );
  const memory = rows((s) =>
    Object.entries(s.processes).flatMap(([p, x]) => [
      [`${p} RSS`, x.rss_mb],
      [`${p} live heap`, x.heap_live_mb ?? x.heap_floor_mb ?? x.heap_used_mb],
    ]),
  );
  const p99 = rows((s) =>
    Object.entries(s.window.endpoints)
      .filter(([e]) => e.startsWith('POST'))
      .map(([e, x]) => [e.replace('POST ', ''), x.p99_ms]),
  );
  const lag = rows((s) => [
    ['lag (commands)', s.lag_offsets],
    ['lag (seconds x 100)', s.lag_seconds === null ? null : s.lag_seconds * 100],
    ['outbox unpublished', s.outbox_unpublished],
  ]);
  const final = samples.at(-1)?.tables ?? [];
  const biggest = [...final]
    .sort((a, b) => b.total_bytes - a.total_bytes)
    .slice(0, 10)
    .map((t) => t.table);
  const tables = rows((s) => s.tables.filter((t) => biggest.includes(t.table)).map((t) => [t.table, t.total_bytes / 2 ** 20]));
  return { memory, p99, lag, tables };
}

export async function renderChart(samples: Sample[], title: string): Promise<string> {
  const r = chartRows(samples);
  const spec = {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title,
    vconcat: [
      panel('Memory per process (MB)', 'MB', r.memory),
      panel('Reply p99 per endpoint, per minute (ms)', 'ms', r.p99, { type: 'symlog' }),
      panel('Projector lag and relay backlog', 'count', r.lag, { type: 'symlog' }),
      panel('Table size, index and TOAST included (MB, the 10 largest)', 'MB', r.tables),
    ],
    resolve: { scale: { color: 'independent' } },
  };
  const compiled = vl.compile(spec as unknown as vl.TopLevelSpec).spec;
  const view = new vega.View(vega.parse(compiled), { renderer: 'none' });
  const svg = await view.toSVG();
  view.finalize();
  return svg;
}
