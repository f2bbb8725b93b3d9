// ISO 8601 date-time with a time zone (Z or an offset), seconds and fraction optional.
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|([+-])(\d{2}):?(\d{2}))$/i;
// Date.UTC maps years 0-99 to 1900-1999, so the bounds are parsed. The upper bound keeps a day of
// margin so the business date of any instant in any time zone is still a 4-digit year.
const MIN = Date.parse('0001-01-02T00:00:00Z');
const MAX = Date.parse('9999-12-30T00:00:00Z');

/**
 * The instant an ISO 8601 date-time names, as a UTC ISO string; null when the text is not a real
 * calendar date-time (2026-02-30 does not roll over into March) or lies outside years 1 to 9999,
 * which PostgreSQL's timestamptz and JavaScript's toISOString both carry (a day of margin at each end).
 */
export function parseInstant(text: string): string | null {
  const m = DATE_TIME.exec(text);
  if (!m) return null;
  // Stryker disable next-line StringLiteral: the defaults are read with Number(), and Number('') is 0 too
  const [, y, mo, d, h, mi, s = '0', , oh = '0', om = '0'] = m;
  const [year, month, day, hour, minute, second] = [y, mo, d, h, mi, s].map(Number) as [number, number, number, number, number, number];
  if (month < 1 || month > 12 || day < 1 || day > new Date(Date.UTC(2000, month, 0)).getUTCDate()) return null;
  if (month === 2 && day === 29 && !(year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0))) return null;
  if (hour > 23 || minute > 59 || second > 59 || Number(oh) > 23 || Number(om) > 59) return null;
  const t = Date.parse(text.replace(' ', 'T'));
  if (Number.isNaN(t) || t < MIN || t > MAX) return null;
  return new Date(t).toISOString();
}

/**
 * The business range of the times a client sends (order and refund times, inventory_as_of):
 * from 2000-01-01T00:00:00Z inclusive to 2100-01-01T00:00:00Z exclusive, whatever the offset written.
 * Anything outside is a client's mistake (a year typed wrong, an epoch sent as zero), not a sale.
 * Documented in docs/api.md "Value ranges".
 */
export const BUSINESS_TIME = { from: '2000-01-01T00:00:00.000Z', until: '2100-01-01T00:00:00.000Z' } as const;
const FROM_MS = Date.parse(BUSINESS_TIME.from);
const UNTIL_MS = Date.parse(BUSINESS_TIME.until);

/** Whether an instant (as parseInstant returns it) lies in BUSINESS_TIME. */
export function inBusinessTime(instant: string): boolean {
  const t = Date.parse(instant);
  return t >= FROM_MS && t < UNTIL_MS;
}
