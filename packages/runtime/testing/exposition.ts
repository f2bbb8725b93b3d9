/** One problem found by lintExposition: the metric family and what is wrong with it. */
export interface MetricProblem {
  metric: string;
  problem: string;
}

const UNIT_ABBREVIATIONS = new Set(['s', 'ms', 'us', 'ns', 'sec', 'b', 'kb', 'mb', 'gb', 'tb', 'pb', 'm', 'h', 'd']);
const NON_BASE_UNITS = new Set([
  'milliseconds',
  'microseconds',
  'nanoseconds',
  'minutes',
  'hours',
  'days',
  'kilobytes',
  'megabytes',
  'gigabytes',
  'percent',
]);

/**
 * The naming rules `promtool check metrics` applies, in plain JS (the project does not depend on
 * promtool being installed; tests/deploy runs promtool itself under `npm run check:deploy`): every
 * family has HELP and TYPE; counters end in `_total` and nothing else does; names and label names are
 * snake_case; no abbreviated or non-base units; `_bucket`/`_count`/`_sum` and the `le`/`quantile`
 * labels only on histograms and summaries; no family twice.
 */
export function lintExposition(text: string): MetricProblem[] {
  const problems: MetricProblem[] = [];
  const help = new Set<string>();
  const types = new Map<string, string>();
  const add = (metric: string, problem: string) => problems.push({ metric, problem });
  const labelNames = new Map<string, Set<string>>();
  for (const line of text.split('\n')) {
    const meta = /^# (HELP|TYPE) (\S+)(?: (.*))?$/.exec(line);
    if (meta) {
      const [, what, name, rest] = meta as unknown as [string, string, string, string | undefined];
      if (what === 'HELP') {
        if (help.has(name)) add(name, 'HELP given twice');
        help.add(name);
        if (!rest?.trim()) add(name, 'no help text');
      } else {
        if (types.has(name)) add(name, 'TYPE given twice');
        types.set(name, rest ?? '');
      }
      continue;
    }
    if (line === '' || line.startsWith('#')) continue;
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? /.exec(line);
    if (!sample) {
      add(line.slice(0, 40), 'unparsable sample line');
      continue;
    }
    const labels = labelNames.get(sample[1]!) ?? new Set<string>();
    for (const m of (sample[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="/g)) labels.add(m[1]!);
    labelNames.set(sample[1]!, labels);
  }
  for (const [name, type] of types) {
    if (!help.has(name)) add(name, 'no help text');
    const isHistogram = type === 'histogram' || type === 'summary';
    if (type === 'counter' && !name.endsWith('_total')) add(name, 'counter metrics should have "_total" suffix');
    if (type !== 'counter' && type !== 'untyped' && name.endsWith('_total'))
      add(name, 'non-counter metrics should not have "_total" suffix');
    if (!isHistogram && /_(bucket|count|sum)$/.test(name))
      add(name, `non-histogram and non-summary metrics should not have "${/_(bucket|count|sum)$/.exec(name)![1]}" suffix`);
    if (!/^[a-z_:][a-z0-9_:]*$/.test(name)) add(name, "metric names should be written in 'snake_case' not 'camelCase'");
    if (name.includes(':')) add(name, 'metric names should not contain ":"');
    const parts = name.split('_');
    for (const p of parts) {
      if (UNIT_ABBREVIATIONS.has(p)) add(name, 'metric names should not contain abbreviated units');
      if (NON_BASE_UNITS.has(p)) add(name, `use base units (seconds, bytes, ratio) instead of "${p}"`);
    }
    if (parts.some((p) => p === type)) add(name, `metric name should not include type '${type}'`);
    const samples = [...labelNames].filter(([s]) => s === name || (isHistogram && /^(.*)_(bucket|count|sum)$/.exec(s)?.[1] === name));
    for (const [, labels] of samples) {
      for (const l of labels) {
        if (!/^[a-z_][a-z0-9_]*$/.test(l)) add(name, `label names should be written in 'snake_case' not 'camelCase': ${l}`);
        if (!isHistogram && (l === 'le' || l === 'quantile'))
          add(name, `non-histogram and non-summary metrics should not have "${l}" label`);
      }
    }
  }
  const sampleFamilies = [...labelNames.keys()].filter((s) => !types.has(s) && !types.has(s.replace(/_(bucket|count|sum)$/, '')));
  for (const s of sampleFamilies) add(s, 'samples without a TYPE');
  return problems;
}
