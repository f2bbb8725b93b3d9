import { describe, expect, it } from 'vitest';
import { closeEnoughToSwap, restedTooLong } from './rebuildInPlace.ts';

// The swap's catch-up runs under locks that live writes wait on (B10): the rebuild follows the live
// projection until what is left takes about 100 ms at its own rate, not a fixed 1,000 commands.
describe('when an in-place rebuild swaps', () => {
  it('waits while what is left would take more than ~100 ms to replay under the locks', () => {
    // 100 commands/s: 10 commands take 100 ms.
    expect(closeEnoughToSwap({ gap: 379, round: 1, commandsPerSecond: 100 })).toBe(false);
    expect(closeEnoughToSwap({ gap: 11, round: 2, commandsPerSecond: 100 })).toBe(false);
    expect(closeEnoughToSwap({ gap: 10, round: 2, commandsPerSecond: 100 })).toBe(true);
    expect(closeEnoughToSwap({ gap: 300, round: 2, commandsPerSecond: 3000 })).toBe(true);
  });

  it('swaps at a gap of one command however slow the replay, and when caught up', () => {
    expect(closeEnoughToSwap({ gap: 1, round: 3, commandsPerSecond: 0 })).toBe(true);
    expect(closeEnoughToSwap({ gap: 0, round: 1, commandsPerSecond: 0 })).toBe(true);
  });

  it('swaps anyway after 50 rounds when the live projection keeps outpacing the threshold', () => {
    expect(closeEnoughToSwap({ gap: 500, round: 49, commandsPerSecond: 100 })).toBe(false);
    expect(closeEnoughToSwap({ gap: 500, round: 50, commandsPerSecond: 100 })).toBe(true);
  });

  it('an explicit maxSwapGap decides instead', () => {
    expect(closeEnoughToSwap({ gap: 900, round: 1, commandsPerSecond: 100, maxSwapGap: 1000 })).toBe(true);
    expect(closeEnoughToSwap({ gap: 5, round: 1, commandsPerSecond: 100, maxSwapGap: 2 })).toBe(false);
  });
});

// A replay that rests (REPLAY_BUSY_PERCENT) must still outpace the live projection, or it never swaps (B10).
describe('when a rested rebuild stops resting', () => {
  it('rests less once a follow round did not shrink the gap to the live projection', () => {
    expect(restedTooLong(25, 600, Infinity)).toBe(false); // after the first round: nothing to compare
    expect(restedTooLong(25, 400, 600)).toBe(false);
    expect(restedTooLong(25, 600, 600)).toBe(true);
    expect(restedTooLong(50, 900, 600)).toBe(true);
  });

  it('flat out there is nothing left to give', () => {
    expect(restedTooLong(100, 900, 600)).toBe(false);
  });
});
