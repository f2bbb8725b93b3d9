import { Gauge, Registry, collectDefaultMetrics } from 'prom-client';

export { Registry };
export { Counter, Gauge, Histogram } from 'prom-client';

/**
 * prom-client's defaults that break Prometheus' naming rules (`promtool check metrics`: a gauge must
 * not end in `_total`). Each is the sum of a labelled gauge that stays (nodejs_active_handles{type},
 * nodejs_active_requests{type}, nodejs_active_resources{type}): `sum(nodejs_active_handles)` is the same figure.
 */
export const DROPPED_DEFAULT_METRICS = ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'];

export function createRegistry(opts: { defaultMetrics?: boolean; prefix?: string } = {}): Registry {
  const registry = new Registry();
  if (opts.defaultMetrics) {
    collectDefaultMetrics({ register: registry, ...(opts.prefix ? { prefix: opts.prefix } : {}) });
    for (const name of DROPPED_DEFAULT_METRICS) registry.removeSingleMetric(`${opts.prefix ?? ''}${name}`);
  }
  return registry;
}

/** What the pool metrics read from a node-postgres Pool (its own counters: no query). */
export interface PoolCounts {
  totalCount: number;
  idleCount: number;
  waitingCount: number;
  options: { max?: number };
}

const pools = new WeakMap<Registry, Map<string, PoolCounts>>();

/**
 * Connection pool gauges for one process, labelled by pool name (gateway, projector: one process may
 * run both and share a registry). Read from the pool's counters when scraped; nothing is queried.
 * - db_pool_connections{pool,state="idle"|"in_use"}: open connections;
 * - db_pool_max_connections{pool}: the pool's size;
 * - db_pool_waiting_clients{pool}: queries and transactions waiting for a free connection
 *   (above 0 for long: the pool is too small or the database is slow or unreachable).
 */
export function registerPoolMetrics(registry: Registry, name: string, pool: PoolCounts): void {
  let mine = pools.get(registry);
  if (!mine) {
    const known = new Map<string, PoolCounts>();
    mine = known;
    pools.set(registry, known);
    new Gauge({
      name: 'db_pool_connections',
      help: 'Open PostgreSQL connections of the pool, by state (idle, in_use)',
      labelNames: ['pool', 'state'],
      registers: [registry],
      collect() {
        this.reset();
        for (const [p, c] of known) {
          this.set({ pool: p, state: 'idle' }, c.idleCount);
          this.set({ pool: p, state: 'in_use' }, Math.max(0, c.totalCount - c.idleCount));
        }
      },
    });
    new Gauge({
      name: 'db_pool_max_connections',
      help: 'Size of the PostgreSQL connection pool',
      labelNames: ['pool'],
      registers: [registry],
      collect() {
        this.reset();
        for (const [p, c] of known) this.set({ pool: p }, c.options.max ?? 10);
      },
    });
    new Gauge({
      name: 'db_pool_waiting_clients',
      help: 'Requests waiting for a free PostgreSQL connection',
      labelNames: ['pool'],
      registers: [registry],
      collect() {
        this.reset();
        for (const [p, c] of known) this.set({ pool: p }, c.waitingCount);
      },
    });
  }
  mine.set(name, pool);
}

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
