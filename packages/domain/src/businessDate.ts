// Pure: the instant and the zone arrive from the caller (the clock is read by the gateway and the
// projector's daily scheduler, never here).
const formats = new Map<string, Intl.DateTimeFormat>();

/** D16: the calendar date of an instant in the business time zone, as YYYY-MM-DD. */
export function businessDate(instant: string | Date, timeZone: string): string {
  const d = typeof instant === 'string' ? new Date(instant) : instant;
  let format = formats.get(timeZone);
  if (!format) {
    // Building a formatter costs far more than using one: one per zone.
    format = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' });
    formats.set(timeZone, format);
  }
  const parts = format.formatToParts(d);
  const part = (type: string) => parts.find((p) => p.type === type)?.value ?? '';
  return `${part('year').padStart(4, '0')}-${part('month')}-${part('day')}`;
}

/** The calendar day before a YYYY-MM-DD date. */
export function previousDate(date: string): string {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  return new Date(Date.UTC(y, m - 1, d - 1)).toISOString().slice(0, 10);
}

const DAY_MS = 86_400_000;

/**
 * The daily scheduler's clock when `BUSINESS_DAY_LENGTH` is shorter than a day (soak and demo runs,
 * never production): from `origin` on, one business day passes every `dayLengthMs`, so the job that
 * runs after each business midnight fires every `dayLengthMs` with the dates that follow `origin`'s.
 * A day of 24 h is the real clock. Pure: the caller reads the real time and passes it.
 */
export function compressedClock(origin: Date, dayLengthMs: number): (realNow: Date) => Date {
  if (dayLengthMs === DAY_MS) return (realNow) => realNow;
  const speed = DAY_MS / dayLengthMs;
  return (realNow) => new Date(origin.getTime() + (realNow.getTime() - origin.getTime()) * speed);
}
