import { describe, expect, it } from 'vitest';
import { DailyBook } from './dailyBook.ts';
import { C_FIRST, LOC, PA, dailyRow, storedDaily } from '../../testing/inventory.ts';

// D16b: the daily book answers whether a row is (re)written: a new row or one whose quantities or
// source change is; the same values again, from a later command, are not.
describe('DailyBook.write (D16b)', () => {
  it('answers true for a new row and for changed values, false for the same values again', () => {
    const book = new DailyBook(new Map());
    expect(book.write(dailyRow(PA, 'A', { on_hand_qty: 3 }))).toBe(true);
    expect(book.write(dailyRow(PA, 'A', { on_hand_qty: 3 }, { command_id: 'later', inventory_as_of: '2026-11-02T01:00:00.000Z' }))).toBe(
      false,
    );
    expect(book.write(dailyRow(PA, 'A', { on_hand_qty: 4 }))).toBe(true);
    expect(book.rows()).toEqual([dailyRow(PA, 'A', { on_hand_qty: 4 })]);
  });

  it('answers false for a stored row sent again, and true when only the source changes', () => {
    const stored = dailyRow(PA, 'A', { on_hand_qty: 3 }, { source: 'daily_job' });
    const book = new DailyBook(storedDaily([stored]));
    expect(book.write(stored)).toBe(false);
    expect(book.rows()).toEqual([]);
    expect(book.write({ ...stored, source: 'snapshot' })).toBe(true);
    expect(book.rows()).toEqual([{ ...stored, source: 'snapshot', location_id: LOC, command_id: C_FIRST }]);
  });
});
