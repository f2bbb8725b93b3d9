import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { retry, type RetryFailure } from './retry.ts';

const transient = Object.assign(new Error('connection lost'), { code: 'ECONNRESET' });
const permanent = Object.assign(new Error('bad row'), { code: '23505' });
const classify = (err: unknown) => ((err as { code?: string }).code === 'ECONNRESET' ? 'transient' : 'permanent');

/** fn failing with `errors` in turn, then answering 'done'; `calls` counts its tries. */
function failing(...errors: unknown[]) {
  const state = { calls: 0 };
  const fn = async (): Promise<string> => {
    const err = errors[state.calls++];
    if (err !== undefined) throw err;
    return 'done';
  };
  return Object.assign(state, { fn });
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('retry', () => {
  it('answers with the first success, without waiting', async () => {
    const f = failing();
    await expect(retry(f.fn, { classify, backoff: () => 1000 })).resolves.toBe('done');
    expect(f.calls).toBe(1);
  });

  it('waits what backoff says after each failure before trying again', async () => {
    const f = failing(transient, transient);
    const result = retry(f.fn, { classify, backoff: (n) => 100 * 2 ** n });
    await vi.advanceTimersByTimeAsync(199);
    expect(f.calls).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(f.calls).toBe(2);
    await vi.advanceTimersByTimeAsync(399);
    expect(f.calls).toBe(2);
    await vi.advanceTimersByTimeAsync(1);
    await expect(result).resolves.toBe('done');
    expect(f.calls).toBe(3);
  });

  it('counts each class apart and tells onRetry of every failure', async () => {
    const seen: Array<Omit<RetryFailure<string>, 'err'>> = [];
    const backoff = vi.fn((n: number, cls: string) => (cls === 'transient' ? 10 * n : 1000 * n));
    const f = failing(transient, permanent, transient, permanent);
    const result = retry(f.fn, { classify, backoff, onRetry: ({ err: _err, ...rest }) => seen.push(rest) });
    await vi.runAllTimersAsync();
    await expect(result).resolves.toBe('done');
    expect(backoff.mock.calls).toEqual([
      [1, 'transient'],
      [1, 'permanent'],
      [2, 'transient'],
      [2, 'permanent'],
    ]);
    expect(seen).toEqual([
      { cls: 'transient', attempt: 1, failures: 1, delayMs: 10 },
      { cls: 'permanent', attempt: 1, failures: 2, delayMs: 1000 },
      { cls: 'transient', attempt: 2, failures: 3, delayMs: 20 },
      { cls: 'permanent', attempt: 2, failures: 4, delayMs: 2000 },
    ]);
  });

  it('throws a failure classify does not retry at once, without telling onRetry', async () => {
    const onRetry = vi.fn();
    const f = failing(permanent, permanent);
    await expect(
      retry(f.fn, { classify: (err) => (classify(err) === 'transient' ? 'transient' : null), backoff: () => 1, onRetry }),
    ).rejects.toBe(permanent);
    expect(f.calls).toBe(1);
    expect(onRetry).not.toHaveBeenCalled();
  });

  it('gives up when backoff says null: onRetry hears of it with no delay, and that failure is thrown', async () => {
    const onRetry = vi.fn();
    const last = Object.assign(new Error('still bad'), { code: '22P02' });
    const f = failing(permanent, permanent, last);
    const result = retry(f.fn, { classify, backoff: (n) => (n >= 3 ? null : 50), onRetry });
    const settled = expect(result).rejects.toBe(last);
    await vi.runAllTimersAsync();
    await settled;
    expect(f.calls).toBe(3);
    expect(onRetry.mock.calls.map((call) => (call[0] as RetryFailure<string>).delayMs)).toEqual([50, 50, null]);
  });

  it('stops when an AbortSignal fires: the wait ends at once and its reason is thrown', async () => {
    const stop = new AbortController();
    const reason = new Error('stopping');
    const f = failing(transient, transient);
    const result = retry(f.fn, { classify, backoff: () => 60_000, signal: stop.signal });
    const settled = expect(result).rejects.toBe(reason);
    await vi.advanceTimersByTimeAsync(10);
    stop.abort(reason);
    await settled;
    expect(f.calls).toBe(1);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('looks at a signal when a try fails, before classifying it', async () => {
    const classifyFn = vi.fn(classify);
    const f = failing(transient);
    await expect(retry(f.fn, { classify: classifyFn, backoff: () => 10, signal: { aborted: true, reason: 'gone' } })).rejects.toBe('gone');
    expect(classifyFn).not.toHaveBeenCalled();
  });

  it('reads a polled condition after the wait, which then runs to its end', async () => {
    let running = true;
    const signal = {
      get aborted() {
        return !running;
      },
      reason: new Error('not running'),
    };
    const f = failing(transient, transient);
    const result = retry(f.fn, { classify, backoff: () => 1000, signal });
    const settled = expect(result).rejects.toBe(signal.reason);
    await vi.advanceTimersByTimeAsync(10);
    running = false;
    await vi.advanceTimersByTimeAsync(989);
    expect(vi.getTimerCount()).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    await settled;
    expect(f.calls).toBe(1);
  });

  it('waits with the given wait, which may end early (a notification)', async () => {
    const waits: number[] = [];
    const f = failing(transient, transient);
    const result = retry(f.fn, {
      classify,
      backoff: (n) => 5000 * n,
      wait: async (ms) => {
        waits.push(ms);
      },
    });
    await expect(result).resolves.toBe('done');
    expect(waits).toEqual([5000, 10_000]);
  });
});
