import { describe, expect, it } from 'vitest';
import { ConfigError, envDuration } from './env.ts';

describe('envDuration', () => {
  it.each([
    ['7d', 7 * 86_400_000],
    ['12h', 12 * 3_600_000],
    ['1m', 60_000],
    ['30s', 30_000],
    ['250ms', 250],
    ['1500', 1500],
  ])('%s is %d ms', (raw, ms) => {
    expect(envDuration({ X: raw }, 'X', '1s')).toBe(ms);
  });

  it('falls back when unset or empty', () => {
    expect(envDuration({}, 'X', '10s')).toBe(10_000);
    expect(envDuration({ X: '' }, 'X', '10s')).toBe(10_000);
  });

  it('refuses what it cannot read, and what is below the minimum, naming the setting', () => {
    expect(() => envDuration({ X: '7 days' }, 'X', '1s')).toThrow(ConfigError);
    expect(() => envDuration({ X: '-1s' }, 'X', '1s')).toThrow(/X must be a duration/);
    expect(() => envDuration({ KAFKA_SESSION_TIMEOUT: '1s' }, 'KAFKA_SESSION_TIMEOUT', '10s', 6000)).toThrow(/at least 6000 ms/);
  });
});
