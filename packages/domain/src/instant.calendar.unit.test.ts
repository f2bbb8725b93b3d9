import { describe, expect, it } from 'vitest';
import { parseInstant } from './instant.ts';

// The times a client sends (ordered_at, refunded_at, inventory_as_of) name a real calendar
// date-time: JavaScript's Date.parse rolls Feb 29 of a common year into March and reads hour 24 as
// the next midnight, and PostgreSQL would store either as another instant than the one written.

describe('parseInstant: the calendar', () => {
  it('Feb 29 exists in a leap year only: every 4th year, but not a century unless it divides by 400', () => {
    expect(parseInstant('2024-02-29T12:00:00Z')).toBe('2024-02-29T12:00:00.000Z');
    expect(parseInstant('2000-02-29T12:00:00Z')).toBe('2000-02-29T12:00:00.000Z');
    expect(parseInstant('2023-02-29T12:00:00Z')).toBeNull();
    expect(parseInstant('2100-02-29T12:00:00Z')).toBeNull();
    expect(parseInstant('1900-02-29T12:00:00Z')).toBeNull();
  });

  it('a common year still has Feb 28 and the 29th of its other months', () => {
    expect(parseInstant('2023-02-28T12:00:00Z')).toBe('2023-02-28T12:00:00.000Z');
    expect(parseInstant('2023-01-29T12:00:00Z')).toBe('2023-01-29T12:00:00.000Z');
    expect(parseInstant('2023-03-29T12:00:00Z')).toBe('2023-03-29T12:00:00.000Z');
  });

  it('the 31st exists only in a month that has it', () => {
    expect(parseInstant('2026-01-31T00:00:00Z')).toBe('2026-01-31T00:00:00.000Z');
    expect(parseInstant('2026-12-31T00:00:00Z')).toBe('2026-12-31T00:00:00.000Z');
    expect(parseInstant('2026-04-31T00:00:00Z')).toBeNull();
  });

  it('months run from 01 to 12 and days from 01', () => {
    expect(parseInstant('2026-01-01T00:00:00Z')).toBe('2026-01-01T00:00:00.000Z');
    expect(parseInstant('2026-12-01T00:00:00Z')).toBe('2026-12-01T00:00:00.000Z');
    expect(parseInstant('2026-00-10T00:00:00Z')).toBeNull();
    expect(parseInstant('2026-13-10T00:00:00Z')).toBeNull();
    expect(parseInstant('2026-01-00T00:00:00Z')).toBeNull();
  });

  it('years 1 to 9999, with a day of margin at each end (both edges in)', () => {
    expect(parseInstant('0001-01-02T00:00:00Z')).toBe('0001-01-02T00:00:00.000Z');
    expect(parseInstant('0001-01-01T23:59:59.999Z')).toBeNull();
    expect(parseInstant('9999-12-30T00:00:00Z')).toBe('9999-12-30T00:00:00.000Z');
    expect(parseInstant('9999-12-30T00:00:00.001Z')).toBeNull();
  });

  it('a year of four digits only: an expanded year (`+002026`) is refused', () => {
    expect(parseInstant('+002026-11-21T10:15:00Z')).toBeNull();
  });
});

describe('parseInstant: the clock and the offset', () => {
  it('hour 24 is refused, though Date.parse reads it as the next midnight; 23:59:59 is the last second', () => {
    expect(parseInstant('2026-01-01T24:00:00Z')).toBeNull();
    expect(parseInstant('2026-01-01T24:00Z')).toBeNull();
    expect(parseInstant('2026-01-01T23:59:59Z')).toBe('2026-01-01T23:59:59.000Z');
  });

  it('minute 60, second 60 (no leap seconds) and an offset past ±23:59 are refused', () => {
    expect(parseInstant('2026-01-01T23:60:00Z')).toBeNull();
    expect(parseInstant('2026-01-01T23:59:60Z')).toBeNull();
    expect(parseInstant('2026-01-01T00:00:00+24:00')).toBeNull();
    expect(parseInstant('2026-01-01T00:00:00+23:60')).toBeNull();
  });

  it('an offset up to ±23:59 is read, with or without its colon', () => {
    expect(parseInstant('2026-01-01T00:00:00+23:59')).toBe('2025-12-31T00:01:00.000Z');
    expect(parseInstant('2026-01-01T00:00:00-00:59')).toBe('2026-01-01T00:59:00.000Z');
    expect(parseInstant('2026-11-21T10:15:00+0900')).toBe('2026-11-21T01:15:00.000Z');
  });

  it('seconds and their fraction are optional; a space may stand for the T', () => {
    expect(parseInstant('2026-11-21T10:15Z')).toBe('2026-11-21T10:15:00.000Z');
    expect(parseInstant('2026-11-21T10:15:30.5+09:00')).toBe('2026-11-21T01:15:30.500Z');
    expect(parseInstant('2026-11-21 10:15:00+09:00')).toBe('2026-11-21T01:15:00.000Z');
  });

  it('a time zone is required, and nothing may follow it', () => {
    expect(parseInstant('2026-11-21T10:15:00')).toBeNull();
    expect(parseInstant('2026-11-21T10:15:00Z ')).toBeNull();
    expect(parseInstant('2026-11-21T10:15:00+09:00 JST')).toBeNull();
  });
});
