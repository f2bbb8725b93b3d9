import { describe, expect, it } from 'vitest';
import { BUSINESS_TIME, inBusinessTime, parseInstant } from './instant.ts';

describe('parseInstant', () => {
  it('reads an ISO 8601 date-time with a zone as its UTC instant, and refuses what is not a calendar date-time', () => {
    expect(parseInstant('2026-11-21T10:15:00+09:00')).toBe('2026-11-21T01:15:00.000Z');
    expect(parseInstant('2026-02-30T00:00:00Z')).toBeNull();
    expect(parseInstant('0000-01-01T00:00:00Z')).toBeNull();
  });
});

describe('the business range of order and inventory times', () => {
  it('is [2000-01-01T00:00:00Z, 2100-01-01T00:00:00Z): the lower edge in, the upper edge out, whatever the offset', () => {
    expect(BUSINESS_TIME).toEqual({ from: '2000-01-01T00:00:00.000Z', until: '2100-01-01T00:00:00.000Z' });
    expect(inBusinessTime('2000-01-01T00:00:00.000Z')).toBe(true);
    expect(inBusinessTime('2099-12-31T23:59:59.999Z')).toBe(true);
    expect(inBusinessTime('1999-12-31T23:59:59.999Z')).toBe(false);
    expect(inBusinessTime('2100-01-01T00:00:00.000Z')).toBe(false);
    expect(inBusinessTime(parseInstant('2000-01-01T08:59:59+09:00')!)).toBe(false);
    expect(inBusinessTime(parseInstant('2099-12-31T23:59:59-12:00')!)).toBe(false);
  });
});
