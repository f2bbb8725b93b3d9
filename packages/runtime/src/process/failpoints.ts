import { setTimeout as sleep } from 'node:timers/promises';
/**
 * Deterministic crash points for fault tests, off unless a test sets them:
 * `FAILPOINTS="projector.after-commit-before-ack=exit;relay.mid-batch=error@2"`.
 * Actions: `exit` (SIGKILL to this process: exactly what kill -9 does, no cleanup), `error` (throw),
 * `sleep(ms)`. `@N` fires on the Nth time the point is reached only (default: every time).
 * With nothing configured a failpoint is a map lookup on an empty map.
 */
type Action = { kind: 'exit' } | { kind: 'error' } | { kind: 'sleep'; ms: number };

interface Point {
  action: Action;
  at: number | null;
  hits: number;
}

const points = new Map<string, Point>();

export class FailpointError extends Error {
  override name = 'FailpointError';
}

function parseAction(raw: string): Action {
  if (raw === 'exit') return { kind: 'exit' };
  if (raw === 'error') return { kind: 'error' };
  const sleep = /^sleep\((\d+)\)$/.exec(raw);
  if (sleep) return { kind: 'sleep', ms: Number(sleep[1]) };
  throw new Error(`FAILPOINTS: unknown action "${raw}" (exit, error, sleep(ms))`);
}

/** Replaces the configured failpoints (from the FAILPOINTS setting; empty or undefined clears them). */
export function setFailpoints(spec: string | undefined): void {
  points.clear();
  for (const entry of (spec ?? '')
    .split(/[;,]/)
    .map((s) => s.trim())
    .filter(Boolean)) {
    const m = /^([a-z0-9.-]+)=([a-z]+(?:\(\d+\))?)(?:@(\d+))?$/.exec(entry);
    if (!m) throw new Error(`FAILPOINTS: cannot parse "${entry}" (name=action[@N])`);
    points.set(m[1] as string, { action: parseAction(m[2] as string), at: m[3] ? Number(m[3]) : null, hits: 0 });
  }
}

export function failpointsActive(): string[] {
  return [...points.keys()];
}

/** Reached a crash point: does what the test configured for it, or nothing. */
export async function failpoint(name: string): Promise<void> {
  if (points.size === 0) return;
  const p = points.get(name);
  if (!p) return;
  p.hits += 1;
  if (p.at !== null && p.hits !== p.at) return;
  switch (p.action.kind) {
    case 'exit':
      process.stderr.write(`failpoint ${name}: exit\n`);
      process.kill(process.pid, 'SIGKILL');
      await new Promise(() => {}); // never continues
      return;
    case 'error':
      throw new FailpointError(`failpoint ${name}`);
    case 'sleep':
      await sleep(p.action.kind === 'sleep' ? p.action.ms : 0);
      return;
  }
}
