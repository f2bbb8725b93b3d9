import { Registry, collectDefaultMetrics } from 'prom-client';

export { Registry };
export { Counter, Gauge, Histogram } from 'prom-client';

export function createRegistry(opts: { defaultMetrics?: boolean; prefix?: string } = {}): Registry {
  const registry = new Registry();
  if (opts.defaultMetrics) collectDefaultMetrics({ register: registry, ...(opts.prefix ? { prefix: opts.prefix } : {}) });
  return registry;
}
