import { integer } from './kinds.ts';

/** A bad setting, named in its message (settings.ts); the process does not start. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/**
 * An integer knob of a developer tool that is not a service setting (the bench's BENCH_* knobs,
 * bench/README.md); the services read theirs through catalog.ts.
 */
export function envInt(env: NodeJS.ProcessEnv, name: string, fallback: number, min = 0): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  try {
    return integer(min).parse(raw);
  } catch (err) {
    throw new ConfigError(`${name} ${(err as Error).message} (got ${raw})`);
  }
}
