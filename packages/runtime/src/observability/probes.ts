import { Gauge, type Registry } from 'prom-client';

/** The named checks of a readiness probe: every one true means ready. */
export type ReadinessChecks = Record<string, boolean>;

/**
 * Runs a process's readiness checks for `/readyz` (docs/operations.md "Observability"): ready only
 * if every check is true. A check that throws, or that does not answer within `timeoutMs` (a
 * black-holed database holds a query until TCP gives up), is not ready: the probe answers 503 in
 * time instead of hanging.
 */
export async function checkReadiness(
  isReady: () => Promise<ReadinessChecks>,
  timeoutMs = 2000,
): Promise<{ ok: boolean; checks: ReadinessChecks }> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<ReadinessChecks>((resolve) => {
    timer = setTimeout(() => resolve({ answered_in_time: false }), timeoutMs);
    timer.unref();
  });
  try {
    const checks = await Promise.race([isReady().catch((): ReadinessChecks => ({ ready: false })), timeout]);
    return { ok: Object.keys(checks).length > 0 && Object.values(checks).every((v) => v === true), checks };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * checkReadiness behind a short cache: concurrent and repeated probes within `cacheMs` share one
 * run of the checks, so a flood of `/readyz` requests costs at most one `SELECT 1` per interval.
 */
export function readinessProbe(
  isReady: () => Promise<ReadinessChecks>,
  opts: { timeoutMs?: number; cacheMs?: number; now?: () => number } = {},
): () => Promise<{ ok: boolean; checks: ReadinessChecks }> {
  const cacheMs = opts.cacheMs ?? 1000;
  const now = opts.now ?? (() => performance.now());
  let last: { at: number; answer: Promise<{ ok: boolean; checks: ReadinessChecks }> } | null = null;
  return () => {
    const t = now();
    if (last && t - last.at < cacheMs) return last.answer;
    const answer = checkReadiness(isReady, opts.timeoutMs);
    last = { at: t, answer };
    return answer;
  };
}

/**
 * `ingest_ready{check}`: 1 or 0 per readiness check, what `/readyz` answers, read through the same
 * cached probe when scraped (so for alerting where kube-state-metrics is not there, e.g. compose).
 * One per registry: a process that runs the gateway and the projector exports the gateway's (which
 * includes the projector's checks).
 */
export function registerReadinessMetric(registry: Registry, probe: () => Promise<{ ok: boolean; checks: ReadinessChecks }>): void {
  if (registry.getSingleMetric('ingest_ready')) return;
  new Gauge({
    name: 'ingest_ready',
    help: 'Readiness of this process by check, as /readyz answers it (1 ready, 0 not)',
    labelNames: ['check'],
    registers: [registry],
    async collect() {
      const { checks } = await probe();
      this.reset();
      for (const [check, ok] of Object.entries(checks)) this.set({ check }, ok ? 1 : 0);
    },
  });
}
