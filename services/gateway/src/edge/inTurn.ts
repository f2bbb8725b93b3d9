/**
 * Heavy synchronous jobs (decoding, parsing and validating a max body: milliseconds each), one per
 * turn of the event loop. Bodies that finish arriving in the same poll would otherwise run back to
 * back before any timer or other socket gets its turn: with 4 max bodies at once, tens of ms of
 * event-loop delay. Each job runs from setImmediate and the next is scheduled from there, so it
 * waits for the following turn (Node runs only the immediates queued before the check phase began).
 */
const waiting: Array<{ job: () => void; failed: (err: unknown) => void }> = [];
let scheduled = false;

function runOne(): void {
  scheduled = false;
  const next = waiting.shift();
  if (waiting.length) schedule();
  if (!next) return;
  try {
    next.job();
  } catch (err) {
    next.failed(err);
  }
}

function schedule(): void {
  if (scheduled) return;
  scheduled = true;
  setImmediate(runOne);
}

/** Runs `job` in a later turn of its own, in the order asked; what it throws goes to `failed`. */
export function inTurn(job: () => void, failed: (err: unknown) => void): void {
  waiting.push({ job, failed });
  schedule();
}

/** How many jobs wait for their turn (tests). */
export function waitingJobs(): number {
  return waiting.length;
}
