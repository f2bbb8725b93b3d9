import { PerformanceObserver, constants } from 'node:perf_hooks';
import { getHeapStatistics } from 'node:v8';
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
    registerLiveHeap(registry, opts.prefix ?? '');
  }
  return registry;
}

/** V8 heap used just after the last major (mark-compact) collection of this process; null before the first. */
let liveHeapBytes: number | null = null;
let gcObserver: PerformanceObserver | null = null;

/**
 * nodejs_heap_live_bytes: the V8 heap used right after the last major collection, the heap that is
 * live. nodejs_heap_size_used_bytes at a scrape also counts the garbage of the young generation (up
 * to 2 x 64 MiB with the services' flags, docs/operations.md#memory) and what the old generation has
 * not collected yet, so its level depends on where in the collector's cycle the scrape falls; a leak
 * is this gauge rising. 0 until the first major collection. One observer per process (the figure is
 * the process's, whatever registry shows it).
 */
function registerLiveHeap(registry: Registry, prefix: string): void {
  if (!gcObserver) {
    gcObserver = new PerformanceObserver((list) => {
      // the entries are delivered after the collection, before much else ran: the heap is still its live set
      if (list.getEntries().some((e) => (e as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR))
        liveHeapBytes = getHeapStatistics().used_heap_size;
    });
    gcObserver.observe({ entryTypes: ['gc'] });
  }
  new Gauge({
    name: `${prefix}nodejs_heap_live_bytes`,
    help: 'V8 heap used right after the last major garbage collection (0 before the first): a leak is this rising',
    registers: [registry],
    collect() {
      this.set(liveHeapBytes ?? 0);
    },
  });
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
