import { describe, expect, it } from 'vitest';
import { versionOf } from './commandVersions.ts';

describe('the version of a command in the log (docs/replay.md#command-versions)', () => {
  it('is its v', () => {
    expect(versionOf({ v: 1 })).toBe(1);
    expect(versionOf({ v: 7 })).toBe(7);
  });

  it('is 1 without v: every command appended before commands carried a version', () => {
    expect(versionOf({ command_id: 'x' })).toBe(1);
    // Not an object at all: the envelope's own check refuses it.
    expect(versionOf(null)).toBe(1);
    expect(versionOf('text')).toBe(1);
    expect(versionOf(undefined)).toBe(1);
    expect(versionOf(42)).toBe(1);
  });

  it('is none when v is not a positive integer', () => {
    for (const v of [0, -1, 1.5, '1', null, Number.NaN, 2 ** 53]) expect(versionOf({ v }), String(v)).toBeNull();
  });
});
