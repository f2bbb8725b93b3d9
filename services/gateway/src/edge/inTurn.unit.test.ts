import { describe, expect, it } from 'vitest';
import { inTurn, waitingJobs } from './inTurn.ts';

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
/** A heavy job: holds the loop for `ms`. */
const busy = (ms: number) => {
  const until = performance.now() + ms;
  while (performance.now() < until);
};

describe('inTurn: one heavy job per turn of the event loop', () => {
  it('runs the jobs in order, one per turn, with a timer able to run between them', async () => {
    const order: string[] = [];
    for (const name of ['a', 'b', 'c'])
      inTurn(
        () => {
          busy(5);
          order.push(name);
        },
        () => {},
      );
    setTimeout(() => order.push('timer'), 0);
    expect(order).toEqual([]);
    expect(waitingJobs()).toBe(3);
    while (waitingJobs() > 0) await turn();
    await turn();
    expect(order.filter((x) => x !== 'timer')).toEqual(['a', 'b', 'c']);
    // Due once the first job ran: it did not wait for the other two.
    expect(order.indexOf('timer')).toBe(1);
  });

  it('hands what a job throws to its own failure handler, and the next jobs still run', async () => {
    const failures: unknown[] = [];
    let ran = false;
    inTurn(
      () => {
        throw new Error('boom');
      },
      (err) => failures.push(err),
    );
    inTurn(
      () => {
        ran = true;
      },
      () => {},
    );
    while (waitingJobs() > 0) await turn();
    await turn();
    expect(failures).toHaveLength(1);
    expect(ran).toBe(true);
  });
});
