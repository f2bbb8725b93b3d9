/** Aborts on the first SIGINT or SIGTERM: a long tool stops between two steps instead of dying mid-step. */
export function stopSignal(): AbortSignal {
  const stop = new AbortController();
  process.once('SIGINT', () => stop.abort());
  process.once('SIGTERM', () => stop.abort());
  return stop.signal;
}
