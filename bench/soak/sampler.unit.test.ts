import { describe, expect, it } from 'vitest';
import { LowWater } from './sampler.ts';

describe('LowWater (the heap floor of a sample)', () => {
  it('keeps the lowest value per process since the last take, and starts again after it', () => {
    const w = new LowWater();
    // A sawtooth: the heap climbs with garbage and drops at each collection.
    for (const v of [60, 31, 75, 29, 48]) w.see('gateway-1', v);
    w.see('gateway-2', 40);
    w.see('gateway-1', null); // a process that did not answer leaves the floor as it was
    expect(w.take('gateway-1')).toBe(29);
    expect(w.take('gateway-1')).toBeNull();
    w.see('gateway-1', 52);
    expect(w.take('gateway-1')).toBe(52);
    expect(w.take('gateway-2')).toBe(40);
  });
});
