import { describe, expect, it } from 'vitest';
import { restartDelayMs } from './consumer.ts';

describe('restartDelayMs', () => {
  it('waits 1 s before the first rebuild of a crashed member, doubling after each failed one, at most 30 s', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 20].map(restartDelayMs)).toEqual([1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000]);
  });
});
