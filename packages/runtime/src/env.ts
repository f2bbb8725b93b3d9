/** Small, strict readers for configuration (only main.ts files read process.env). */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

export function envString(env: NodeJS.ProcessEnv, name: string, fallback?: string): string {
  const v = env[name];
  if (v === undefined || v === '') {
    if (fallback === undefined) throw new ConfigError(`${name} is required`);
    return fallback;
  }
  return v;
}

export function envInt(env: NodeJS.ProcessEnv, name: string, fallback: number, min = 0): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) throw new ConfigError(`${name} must be an integer >= ${min} (got ${raw})`);
  return n;
}

/** Comma-separated list; blanks dropped. Used for rotating secrets (D9). */
export function envList(env: NodeJS.ProcessEnv, name: string): string[] {
  return (env[name] ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** A duration such as `7d`, `12h`, `30s`, `500ms` (a bare number is milliseconds), in milliseconds. */
export function envDuration(env: NodeJS.ProcessEnv, name: string, fallback: string, minMs = 0): number {
  const raw = env[name] === undefined || env[name] === '' ? fallback : (env[name]);
  const m = /^(\d+)(ms|s|m|h|d)?$/.exec(raw.trim());
  const ms = m ? Number(m[1]) * (DURATION_UNITS[m[2] ?? 'ms'] ?? 1) : NaN;
  if (!Number.isSafeInteger(ms) || ms < minMs) throw new ConfigError(`${name} must be a duration such as 7d, 12h, 30s or 500ms, at least ${minMs} ms (got ${raw})`);
  return ms;
}
