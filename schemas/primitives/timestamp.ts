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

// The instants every store can hold: years 0001 to 9999 in UTC. PostgreSQL has no year 0, and an
// offset can carry a local time just inside the range to a UTC year outside it.
const MIN_INSTANT_MS = new Date('0001-01-01T00:00:00Z').getTime();
const MAX_INSTANT_MS = new Date('9999-12-31T23:59:59.999Z').getTime();

export function isDateTime(text: string): boolean {
  const m = DATE_TIME.exec(text);
  if (!m) return false;
  const [, y, mo, d, h, mi, s, , , oh, om] = m;
  if (!validDate(Number(y), Number(mo), Number(d))) return false;
  if (Number(h) > 23 || Number(mi) > 59 || Number(s) > 60) return false;
  if (oh !== undefined && (Number(oh) > 23 || Number(om) > 59)) return false;
  // An offset moves the instant by less than a day, so only the first and last years of the range
  // (and year 0) can fall outside it; any other year is inside without parsing the instant.
  const year = Number(y);
  if (year > 1 && year < 9999) return true;
  const ms = dateTimeMs(text);
  return ms >= MIN_INSTANT_MS && ms <= MAX_INSTANT_MS;
}

export function isFullDate(text: string): boolean {
  const m = FULL_DATE.exec(text);
  return m !== null && validDate(Number(m[1]), Number(m[2]), Number(m[3]));
}

export const dateTimeSchema = z
  .string()
  .refine(isDateTime, 'must be an RFC 3339 date-time with an explicit offset or Z (e.g. 2026-09-01T12:00:00Z)');

export const fullDateSchema = z.string().refine(isFullDate, 'must be a calendar date YYYY-MM-DD');

// The one time model, from the edge to every pipeline (docs/decisions/0022-time-model-and-request-bounds.md): an
// instant is a millisecond of UTC. A leap second (second 60, valid RFC 3339) is read as the last
// millisecond of its minute, 59.999, whatever its fraction: it stays after everything earlier in
// the minute and before the next minute, and every engine downstream (JavaScript dates,
// PostgreSQL, ClickHouse, Neo4j) can hold it. Finer fractions than milliseconds are truncated.
const LEAP_SECOND = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}):60(?:\.\d+)?(?=Z|[+-])/;

// The text with a leap second replaced as above; any other text as it is.
function withoutLeapSecond(text: string): string {
  // The colon before the seconds sits at index 16; without ":60" there, the pattern cannot match.
  if (!text.startsWith(':60', 16)) return text;
  return text.replace(LEAP_SECOND, '$1:59.999');
}

// Milliseconds since the epoch of a value that passed isDateTime's pattern.
export function dateTimeMs(text: string): number {
  return Date.parse(withoutLeapSecond(text));
}

// The instant of a value that passed isDateTime, and its one rendering for every store and record
// (UTC, milliseconds, Z): PostgreSQL refuses offsets past ±15:59 that RFC 3339 allows, and
// JavaScript refuses a leap second, so no pipeline hands a store the text as sent.
export function instantOf(text: string): Date {
  return new Date(dateTimeMs(text));
}

export function canonicalInstant(text: string): string {
  return instantOf(text).toISOString();
}

// Rewrites, in place, every date-time string with a leap second within a parsed event (members
// and array items, at any depth the request bounds allow): what the pipelines build from an event
// then holds only instants every engine can represent. Other strings are left exactly as sent.
export function replaceLeapSeconds(value: unknown): void {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const node = stack.pop();
    if (node === null || typeof node !== 'object') continue;
    const entries = node as Record<string, unknown>;
    for (const key of Object.keys(entries)) {
      const member = entries[key];
      if (typeof member === 'string') {
        if (member.length <= 40 && LEAP_SECOND.test(member) && isDateTime(member)) entries[key] = withoutLeapSecond(member);
      } else if (member !== null && typeof member === 'object') {
        stack.push(member);
      }
    }
  }
}
