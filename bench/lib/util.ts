import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';

const started = performance.now();

/** Progress on stderr, with the seconds since the bench started. */
export function say(msg: string): void {
  process.stderr.write(`[bench ${((performance.now() - started) / 1000).toFixed(1).padStart(6)}s] ${msg}\n`);
}

/** Nearest-rank percentile of a sample (0 for an empty one). */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? 0;
}

export function median(values: number[]): number {
  return percentile(values, 50);
}

export function round(n: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

/** UUIDv7 as the gateway draws it (48-bit ms time, version 7, variant 10, random rest). */
export function uuidv7(at = Date.now()): string {
  const b = randomBytes(16);
  b.writeUIntBE(at, 0, 6);
  b[6] = 0x70 | ((b[6] ?? 0) & 0x0f);
  b[8] = 0x80 | ((b[8] ?? 0) & 0x3f);
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** A fresh, strictly increasing receive time (commands of a run never share an instant). */
let lastInstant = 0;
export function nextInstant(): Date {
  lastInstant = Math.max(Date.now(), lastInstant + 1);
  return new Date(lastInstant);
}

export function gitHead(cwd: string): { commit: string; dirty: boolean } {
  try {
    const commit = execFileSync('git', ['rev-parse', 'HEAD'], { cwd, encoding: 'utf8' }).trim();
    // The results of an earlier run are not the code being measured.
    const status = execFileSync('git', ['status', '--porcelain', '--untracked-files=no', '--', '.', ':!bench/results'], {
      cwd,
      encoding: 'utf8',
    }).trim();
    return { commit, dirty: status.length > 0 };
  } catch {
    return { commit: 'unknown', dirty: false };
  }
}

export function machine(): Record<string, unknown> {
  const cpus = os.cpus();
  return {
    cpu_model: cpus[0]?.model ?? 'unknown',
    cpu_count: cpus.length,
    total_memory_gib: round(os.totalmem() / 1024 ** 3, 1),
    os: `${os.type()} ${os.release()} ${os.arch()}`,
  };
}

/** The machine's CPU time so far (all cores, ms): busy and total, for a share busy between two readings. */
export function machineCpu(): { busy: number; total: number } {
  let busy = 0;
  let total = 0;
  for (const c of os.cpus()) {
    const t = c.times;
    busy += t.user + t.nice + t.sys + t.irq;
    total += t.user + t.nice + t.sys + t.irq + t.idle;
  }
  return { busy, total };
}

/** The share of the machine's CPU (0..1, all cores) busy since `from`. */
export function busyShareSince(from: { busy: number; total: number }): number {
  const now = machineCpu();
  const total = now.total - from.total;
  return total > 0 ? (now.busy - from.busy) / total : 0;
}

/** The installed version of a dependency, resolved from the workspace package that uses it. */
export function packageVersion(name: string, fromPackageJson: string): string {
  try {
    const require = createRequire(fromPackageJson);
    let dir = require.resolve(name);
    for (let i = 0; i < 6; i++) {
      dir = dir.slice(0, dir.lastIndexOf('/'));
      try {
        const pkg = JSON.parse(readFileSync(`${dir}/package.json`, 'utf8')) as { name?: string; version?: string };
        if (pkg.name === name && pkg.version) return pkg.version;
      } catch {
        // keep walking up
      }
    }
  } catch {
    // not resolvable from there
  }
  return 'unknown';
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
