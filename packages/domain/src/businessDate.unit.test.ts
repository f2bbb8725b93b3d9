import { describe, expect, it } from 'vitest';
import { businessDate, previousDate } from './businessDate.ts';

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
