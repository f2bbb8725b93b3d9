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
