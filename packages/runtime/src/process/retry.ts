/**
 * What stops a retry: an AbortSignal, whose abort also ends a wait at once, or any object with
 * `aborted` (a condition read when a try fails and after each wait; a wait then runs to its end).
 * When it says aborted, `reason` is thrown.
 */
export interface RetrySignal {
  readonly aborted: boolean;
  readonly reason?: unknown;
  addEventListener?: AbortSignal['addEventListener'];
  removeEventListener?: AbortSignal['removeEventListener'];
}

/** One failed try, as `onRetry` is told of it. */
export interface RetryFailure<C extends string> {
  err: unknown;
  /** Its class, as `classify` said. */
  cls: C;
  /** Failures of this class so far, this one included (1 for the first). */
  attempt: number;
  /** Failures of every class so far. */
  failures: number;
  /** The wait before the next try; null when this failure ends the retries (it is thrown next). */
  delayMs: number | null;
}

export interface RetryOptions<C extends string> {
  /** The failure's class, whose failures are counted and backed off apart; null: not retried, thrown as it is. */
  classify: (err: unknown) => C | null;
  /** How long to wait after the `attempt`-th failure of class `cls` before trying again; null gives up and throws it. */
  backoff: (attempt: number, cls: C) => number | null;
  signal?: RetrySignal;
  /** Every classified failure, before its wait (logs, metrics); `delayMs` is null for the one that is thrown. */
  onRetry?: (failure: RetryFailure<C>) => void;
  /** How to wait (default: a timer that an abort of `signal` ends early); e.g. one that a notification also ends. */
  wait?: (ms: number, signal?: RetrySignal) => Promise<void>;
}

/**
 * Runs `fn` until it succeeds, waiting between tries as `backoff` says for the class of each failure
 * (transient or not, database or broker: the caller's `classify`). The first try always runs; once
 * a try failed, `signal` is looked at before the failure is classified and again after the wait.
 */
export async function retry<T, C extends string>(fn: () => Promise<T>, opts: RetryOptions<C>): Promise<T> {
  const counts = new Map<C, number>();
  let failures = 0;
  const wait = opts.wait ?? delay;
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      throwIfAborted(opts.signal);
      const cls = opts.classify(err);
      if (cls === null) throw err;
      const attempt = (counts.get(cls) ?? 0) + 1;
      counts.set(cls, attempt);
      failures += 1;
      const delayMs = opts.backoff(attempt, cls);
      opts.onRetry?.({ err, cls, attempt, failures, delayMs });
      if (delayMs === null) throw err;
      await wait(delayMs, opts.signal);
      throwIfAborted(opts.signal);
    }
  }
}

function throwIfAborted(signal: RetrySignal | undefined): void {
  if (signal?.aborted) throw signal.reason ?? new Error('aborted');
}

/** Resolves after `ms`, or as soon as `signal` aborts. */
export function delay(ms: number, signal?: RetrySignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener?.('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener?.('abort', done, { once: true });
  });
}
