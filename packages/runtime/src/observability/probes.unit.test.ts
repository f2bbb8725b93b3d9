import { describe, expect, it } from 'vitest';
import { checkReadiness, readinessProbe } from './probes.ts';

describe('checkReadiness', () => {
  it('is ready only when every check is true', async () => {
    expect(await checkReadiness(async () => ({ database: true, kafka: true }))).toEqual({
      ok: true,
      checks: { database: true, kafka: true },
    });
    expect(await checkReadiness(async () => ({ database: true, kafka: false }))).toEqual({
      ok: false,
      checks: { database: true, kafka: false },
    });
    expect((await checkReadiness(async () => ({}))).ok).toBe(false);
  });

  it('is not ready when the checks throw, or do not answer in time (a black-holed dependency)', async () => {
    expect(await checkReadiness(async () => Promise.reject(new Error('boom')))).toEqual({ ok: false, checks: { ready: false } });
    const started = performance.now();
    expect(await checkReadiness(() => new Promise(() => {}), 50)).toEqual({ ok: false, checks: { answered_in_time: false } });
    expect(performance.now() - started).toBeLessThan(1000);
  });
});

describe('readinessProbe', () => {
  it('runs the checks at most once per cache interval, sharing the answer', async () => {
    let t = 0;
    let runs = 0;
    let up = true;
    const probe = readinessProbe(async () => (runs++, { database: up }), { cacheMs: 1000, now: () => t });
    await Promise.all([probe(), probe(), probe()]);
    expect(runs).toBe(1);
    up = false;
    expect((await probe()).ok).toBe(true); // cached
    t = 1000;
    expect((await probe()).ok).toBe(false);
    expect(runs).toBe(2);
  });
});
