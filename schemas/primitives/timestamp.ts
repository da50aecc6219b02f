import { z } from 'zod';

// RFC 3339 date-time with an explicit offset: upper-case T and Z, a colon in the offset, seconds
// required, fractions optional. Calendar validity is checked too (no February 30th).
const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-](\d{2}):(\d{2}))$/;
const FULL_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

// Proleptic Gregorian, as RFC 3339 Appendix C. (Date.UTC would read years 0-99 as 1900-1999,
// which made 0000-02-29 invalid.)
function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

function validDate(year: number, month: number, day: number): boolean {
  return month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth(year, month);
}

export function isDateTime(text: string): boolean {
  const m = DATE_TIME.exec(text);
  if (!m) return false;
  const [, y, mo, d, h, mi, s, , , oh, om] = m;
  if (!validDate(Number(y), Number(mo), Number(d))) return false;
  if (Number(h) > 23 || Number(mi) > 59 || Number(s) > 60) return false;
  if (oh !== undefined && (Number(oh) > 23 || Number(om) > 59)) return false;
  return true;
}

export function isFullDate(text: string): boolean {
  const m = FULL_DATE.exec(text);
  return m !== null && validDate(Number(m[1]), Number(m[2]), Number(m[3]));
}

export const dateTimeSchema = z
  .string()
  .refine(isDateTime, 'must be an RFC 3339 date-time with an explicit offset or Z (e.g. 2026-09-01T12:00:00Z)');

export const fullDateSchema = z.string().refine(isFullDate, 'must be a calendar date YYYY-MM-DD');

// Milliseconds since the epoch of a value that passed isDateTime. A leap second (:60) counts as
// the last second of its minute.
export function dateTimeMs(text: string): number {
  return Date.parse(text.replace(/:60(?=[.Z+-])/, ':59'));
}
