// Samples a child process every second from /proc (RSS, CPU) and, when it serves Prometheus
// metrics, from its /metrics (V8 heap, and any gauge asked for): what B9 plots against the log.
import { readFileSync } from 'node:fs';

export interface ProcessSample {
  /** Seconds since sampling started. */
  t: number;
  rss_mb: number;
  /** User + system CPU seconds of the process so far. */
  cpu_s: number;
  heap_used_mb: number | null;
  /** The gauges asked for, as last scraped. */
  gauges: Record<string, number>;
}

const CLOCK_TICKS = 100; // USER_HZ on Linux

/** RSS (MB) and CPU seconds of `pid`, or null once it is gone. */
export function procStat(pid: number): { rss_mb: number; cpu_s: number } | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const rssKb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
    // Fields after the command name (which may hold spaces): state is field 3, utime 14, stime 15.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const cpu = (Number(rest[11]) + Number(rest[12])) / CLOCK_TICKS;
    return { rss_mb: rssKb / 1024, cpu_s: cpu };
  } catch {
    return null;
  }
}

/** The value of each of `names` in a Prometheus text exposition (the first series of each). */
export function gaugesOf(text: string, names: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const name of names) {
    const m = new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.eE+-]+)$`, 'm').exec(text);
    if (m) out[name] = Number(m[1]);
  }
  return out;
}

export interface Sampler {
  samples: ProcessSample[];
  /** The latest scrape (also between two samples): for a decision such as a kill at half way. */
  latest(): ProcessSample | null;
  stop(): ProcessSample[];
}

export function sampleProcess(pid: number, opts: { metricsUrl?: string; gauges?: string[]; everyMs?: number } = {}): Sampler {
  const samples: ProcessSample[] = [];
  const started = performance.now();
  const names = ['nodejs_heap_size_used_bytes', ...(opts.gauges ?? [])];
  let busy = false;
  const tick = async (): Promise<void> => {
    if (busy) return;
    busy = true;
    try {
      const stat = procStat(pid);
      if (!stat) return;
      let gauges: Record<string, number> = {};
      if (opts.metricsUrl) {
        const res = await fetch(opts.metricsUrl, { signal: AbortSignal.timeout(900) }).catch(() => null);
        if (res?.ok) gauges = gaugesOf(await res.text(), names);
      }
      const heap = gauges['nodejs_heap_size_used_bytes'];
      samples.push({
        t: (performance.now() - started) / 1000,
        ...stat,
        heap_used_mb: heap === undefined ? null : heap / 2 ** 20,
        gauges,
      });
    } finally {
      busy = false;
    }
  };
  const timer = setInterval(() => void tick(), opts.everyMs ?? 1000);
  return {
    samples,
    latest: () => samples.at(-1) ?? null,
    stop: () => {
      clearInterval(timer);
      return samples;
    },
  };
}
