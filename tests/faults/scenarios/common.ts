// Helpers the fault scenarios share.
import { sleep, type Ctx, type Outcome } from '../harness.ts';
import type { Load, Shop } from '../load.ts';
import type { Service } from '../procs.ts';

export const WARM_MS = Number(process.env['FAULTS_WARM_MS'] ?? 5000);

export interface Scenario {
  name: string;
  what: string;
  /** Runs only on the suite's own three-node cluster (`--cluster`); the others run on either. */
  needsCluster?: boolean;
  run(ctx: Ctx): Promise<Outcome>;
}

/** Sum of a Prometheus counter's samples whose labels contain every `match` pair. */
export async function metric(svc: Service, name: string, match: Record<string, string> = {}): Promise<number | null> {
  try {
    const text = await (await fetch(svc.url('/metrics'), { signal: AbortSignal.timeout(3000) })).text();
    let sum = 0;
    for (const line of text.split('\n')) {
      if (!line.startsWith(name)) continue;
      const m = /^([a-z_]+)(\{[^}]*\})?\s+([0-9.e+-]+)$/.exec(line);
      if (!m || m[1] !== name) continue;
      if (Object.entries(match).every(([k, v]) => (m[2] ?? '').includes(`${k}="${v}"`))) sum += Number(m[3]);
    }
    return sum;
  } catch {
    return null;
  }
}

/** The suite's shops set up through `gw`, and open-loop load on them through `gw`, started. */
export async function startLoad(ctx: Ctx, gw: Service): Promise<{ load: Load; shops: Shop[] }> {
  const shops = await ctx.setupShops(gw, ctx.shopNames());
  const load = ctx.newLoad(shops, [gw]);
  load.start();
  ctx.note('load started');
  return { load, shops };
}

export async function startAll(services: Service[]): Promise<void> {
  await Promise.all(services.map((s) => s.start()));
}

/** Waits for a process to die on its configured failpoint. */
export async function awaitFailpoint(ctx: Ctx, svc: Service, point: string, timeoutMs: number, failures: string[]): Promise<number | null> {
  const exit = await svc.waitExit(timeoutMs);
  if (!exit) {
    failures.push(`failpoint ${point} never fired within ${timeoutMs / 1000} s (is it wired in this build?)`);
    ctx.note(`failpoint ${point} did not fire`);
    return null;
  }
  ctx.note(`${svc.name} died at failpoint ${point} (${exit.signal ?? exit.code})`);
  return exit.at;
}

export async function waitUntil<T>(timeoutMs: number, fn: () => Promise<T | null | undefined | false>): Promise<T | null> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) return null;
    await sleep(250);
  }
}
