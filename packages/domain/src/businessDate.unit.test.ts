import { describe, expect, it } from 'vitest';
import { businessDate, compressedClock, previousDate } from './businessDate.ts';

// D16: a snapshot's day and the daily job's date are calendar dates in BUSINESS_TIMEZONE.
describe('businessDate (D16)', () => {
  it('is the calendar date of the instant in the zone, not in UTC', () => {
    expect(businessDate('2026-03-31T14:59:59.999Z', 'Asia/Tokyo')).toBe('2026-03-31');
    expect(businessDate('2026-03-31T15:00:00Z', 'Asia/Tokyo')).toBe('2026-04-01');
    expect(businessDate('2026-03-31T15:00:00Z', 'UTC')).toBe('2026-03-31');
    expect(businessDate(new Date('2026-03-31T15:00:00Z'), 'Asia/Tokyo')).toBe('2026-04-01');
  });

  it('writes the year with four digits', () => {
    expect(businessDate('0999-06-01T12:00:00Z', 'UTC')).toBe('0999-06-01');
  });
});

describe('previousDate', () => {
  it('is the day before, across months, leap days and years', () => {
    expect(previousDate('2026-04-01')).toBe('2026-03-31');
    expect(previousDate('2026-03-01')).toBe('2026-02-28');
    expect(previousDate('2024-03-01')).toBe('2024-02-29');
    expect(previousDate('2026-01-01')).toBe('2025-12-31');
  });
});

describe('compressedClock (BUSINESS_DAY_LENGTH)', () => {
  const origin = new Date('2026-11-26T21:00:00Z'); // 06:00 on 2026-11-27 in Tokyo

  it('is the real clock for a day of 24 h', () => {
    const now = new Date('2026-11-27T03:00:00Z');
    expect(compressedClock(origin, 86_400_000)(now)).toBe(now);
  });

  it('passes one business day per day length from the origin on', () => {
    const clock = compressedClock(origin, 120_000); // a day every 2 minutes
    expect(clock(origin).toISOString()).toBe(origin.toISOString());
    expect(clock(new Date(origin.getTime() + 120_000)).toISOString()).toBe('2026-11-27T21:00:00.000Z');
    expect(clock(new Date(origin.getTime() + 60_000)).toISOString()).toBe('2026-11-27T09:00:00.000Z');
  });

  it('moves the scheduler to the next date after each compressed business midnight', () => {
    const clock = compressedClock(origin, 120_000);
    // 06:00 in Tokyo: midnight is 18 business hours away, 18/24 of a 2-minute day = 90 s
    const ended = (afterMs: number) => previousDate(businessDate(clock(new Date(origin.getTime() + afterMs)), 'Asia/Tokyo'));
    expect(ended(0)).toBe('2026-11-26');
    expect(ended(89_999)).toBe('2026-11-26');
    expect(ended(90_000)).toBe('2026-11-27');
    expect(ended(90_000 + 120_000)).toBe('2026-11-28');
  });
});
