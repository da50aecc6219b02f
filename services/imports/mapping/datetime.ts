import type { ErrorCode } from '../../../schemas/errors/catalog.ts';
import { isDateTime } from '../../../schemas/primitives/timestamp.ts';
import type { FieldRule } from '../../../schemas/imports/mapping.ts';
import type { Failure, Result } from './values.ts';

// Datetime values of an import row, to an RFC 3339 UTC string with milliseconds
// (2019-09-01T10:00:00.000Z), except a value that is already a date-time as live ingest takes it
// (upper-case T, Z or an offset): that one is kept as written, so a fact both sent live and
// imported has the same content, and the import's row is a duplicate of the live event (or the
// live event of the imported row) instead of a conflict. Every failure carries svc:validation/timestamp_out_of_range (the
// spec files "occurred_at unparseable" under it); assembly keeps that code for occurred_at only
// and reports any other target's failure as schema (assemble.ts).
//
// Formats:
// - rfc3339 (default; `pattern` alone implies pattern): what RFC 3339 allows, with T, t or a
//   space between date and time, Z or z or ±hh:mm, seconds required, any number of fraction
//   digits (truncated to milliseconds, never rounded), second 60 read as 59 (as dateTimeMs does).
//   Without an offset (2019-09-01 12:00:00) the wall-clock time is read in `tz`. A date alone is
//   not a date-time: use the pattern YYYY-MM-DD for that.
// - epoch_s: an integer number of seconds, optionally signed, with an optional fraction (kept to the ms).
// - epoch_ms: an integer number of milliseconds, optionally signed.
//   (A JSON number is read as its text; epochs ignore `tz`.)
// - pattern: tokens YYYY MM DD HH mm ss SSS, and YY as an extension (two-digit year: 00-49 is
//   2000-2049, 50-99 is 1950-1999; the Berka data set writes 930101). Each token is exactly that
//   many digits; every other character is a literal that must match exactly; a stray token
//   letter (YYY, SS, a lone D...) is refused as a likely typo. Year, month and day are required;
//   HH mm ss SSS default to 0. The wall-clock time is read in `tz`.
//
// tz: Z, ±hh:mm or an IANA name (UTC when unset). A wall-clock time that a zone skips (spring
// forward, Europe/Prague 02:30 on 2024-03-31) is moved forward by the length of the gap (03:30
// CEST); one that happens twice (fall back, 02:30 on 2024-10-27) is the earlier of the two
// (02:30 CEST). That is Temporal's and java.time's default ("compatible") disambiguation.
// Results are limited to years 0000-9999 (what RFC 3339 can write).

const TIMESTAMP: ErrorCode = 'svc:validation/timestamp_out_of_range';
// Two-digit years below the pivot are 20xx, the others 19xx.
const TWO_DIGIT_YEAR_PIVOT = 50;

export type DatetimeRule = Pick<FieldRule, 'format' | 'pattern' | 'tz'>;

function bad(reason: string): Failure {
  return { ok: false, code: TIMESTAMP, reason };
}

export interface WallTime {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  millisecond: number;
}

// Proleptic Gregorian, as RFC 3339 Appendix C.
function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

function validWallTime(w: WallTime): boolean {
  return (
    w.month >= 1 && w.month <= 12 && w.day >= 1 && w.day <= daysInMonth(w.year, w.month) &&
    w.hour <= 23 && w.minute <= 59 && w.second <= 59 && w.millisecond <= 999
  );
}

// The wall-clock time read as UTC. (Date.UTC would read years 0-99 as 1900-1999.)
function asUtcMs(w: WallTime): number {
  const d = new Date(0);
  d.setUTCFullYear(w.year, w.month - 1, w.day);
  d.setUTCHours(w.hour, w.minute, w.second, w.millisecond);
  return d.getTime();
}

const MIN_MS = -62_167_219_200_000; // 0000-01-01T00:00:00.000Z
const MAX_MS = 253_402_300_799_999; // 9999-12-31T23:59:59.999Z

function toIso(ms: number): Result<string> {
  if (!Number.isFinite(ms) || ms < MIN_MS || ms > MAX_MS) return bad('outside the years 0000-9999');
  return { ok: true, value: new Date(ms).toISOString() };
}

// ---- time zones ----

export type TimeZone = { kind: 'fixed'; offsetMs: number } | { kind: 'iana'; name: string; format: Intl.DateTimeFormat };

const OFFSET = /^([+-])(\d{2}):(\d{2})$/;

function parseOffset(text: string): number | undefined {
  if (text === 'Z' || text === 'z') return 0;
  const m = OFFSET.exec(text);
  if (!m) return undefined;
  const hours = Number(m[2]);
  const minutes = Number(m[3]);
  if (hours > 23 || minutes > 59) return undefined;
  return (m[1] === '-' ? -1 : 1) * (hours * 60 + minutes) * 60_000;
}

const zones = new Map<string, Result<TimeZone>>();

// `tz` of a rule: undefined is UTC. Fails on anything that is neither Z, ±hh:mm nor an IANA name
// Intl knows. (The mapping compiler can call this to refuse a bad tz up front.)
export function resolveTimeZone(tz: string | undefined): Result<TimeZone> {
  if (tz === undefined) return { ok: true, value: { kind: 'fixed', offsetMs: 0 } };
  let zone = zones.get(tz);
  if (zone === undefined) {
    zone = resolveUncached(tz);
    if (zones.size >= 1000) zones.clear();
    zones.set(tz, zone);
  }
  return zone;
}

function resolveUncached(tz: string): Result<TimeZone> {
  if (tz === 'Z') return { ok: true, value: { kind: 'fixed', offsetMs: 0 } };
  if (/^[+-]/.test(tz)) {
    // Real zones stay within ±14:00, so a larger configured offset is a typo.
    const offsetMs = parseOffset(tz);
    return offsetMs === undefined || Math.abs(offsetMs) > 14 * 3_600_000 + 59 * 60_000 || tz.length !== 6
      ? bad('tz is not a valid ±hh:mm offset (hh at most 14)')
      : { ok: true, value: { kind: 'fixed', offsetMs } };
  }
  try {
    const format = new Intl.DateTimeFormat('en-US', { timeZone: tz, timeZoneName: 'longOffset' });
    return { ok: true, value: { kind: 'iana', name: format.resolvedOptions().timeZone, format } };
  } catch {
    return bad('tz is not Z, ±hh:mm or a known IANA time zone');
  }
}

const LONG_OFFSET = /^GMT(?:([+-])(\d{1,2})(?::(\d{2}))?(?::(\d{2}))?)?$/;

// The zone's UTC offset at an instant, in ms (local = utc + offset). Intl's longOffset writes
// GMT, GMT+01:00, or GMT+00:57:44 for local mean time.
function offsetAt(format: Intl.DateTimeFormat, ms: number): number {
  const name = format.formatToParts(ms).find((p) => p.type === 'timeZoneName')?.value ?? '';
  const m = LONG_OFFSET.exec(name);
  if (!m) throw new Error(`unexpected time zone offset text from Intl: ${name}`);
  if (m[1] === undefined) return 0;
  const seconds = Number(m[2]) * 3600 + Number(m[3] ?? 0) * 60 + Number(m[4] ?? 0);
  return (m[1] === '-' ? -1 : 1) * seconds * 1000;
}

const DAY_MS = 86_400_000;

// The instant of a wall-clock time in a zone (see the top of the file for gaps and overlaps).
export function wallTimeToEpochMs(wall: WallTime, zone: TimeZone): number {
  const local = asUtcMs(wall);
  if (zone.kind === 'fixed') return local - zone.offsetMs;
  // The offsets in force a day either side cover any transition near this wall-clock time.
  const before = offsetAt(zone.format, local - DAY_MS);
  const after = offsetAt(zone.format, local + DAY_MS);
  const candidates = [...new Set([before, after])]
    .map((offset) => local - offset)
    .filter((instant) => offsetAt(zone.format, instant) === local - instant);
  // Overlap: two instants show this wall-clock time; the earlier wins.
  if (candidates.length > 0) return Math.min(...candidates);
  // Gap: none does; read it with the offset before the transition, which moves it forward.
  return local - before;
}

// ---- patterns ----

type Field = 'year4' | 'year2' | 'month' | 'day' | 'hour' | 'minute' | 'second' | 'millisecond';
export type PatternToken = { kind: 'field'; field: Field; width: number } | { kind: 'literal'; char: string };

const TOKENS: ReadonlyArray<readonly [string, Field]> = [
  ['YYYY', 'year4'],
  ['YY', 'year2'],
  ['MM', 'month'],
  ['DD', 'day'],
  ['HH', 'hour'],
  ['mm', 'minute'],
  ['ss', 'second'],
  ['SSS', 'millisecond'],
];
const TOKEN_LETTERS = new Set(['Y', 'M', 'D', 'H', 'm', 's', 'S']);

const patterns = new Map<string, Result<PatternToken[]>>();

// The tokens of a pattern, or why it is refused. (The mapping compiler can call this to refuse a
// bad pattern up front; the reason names the pattern, never a source value.)
export function compilePattern(pattern: string): Result<PatternToken[]> {
  let compiled = patterns.get(pattern);
  if (compiled === undefined) {
    compiled = compileUncached(pattern);
    if (patterns.size >= 1000) patterns.clear();
    patterns.set(pattern, compiled);
  }
  return compiled;
}

function compileUncached(pattern: string): Result<PatternToken[]> {
  const tokens: PatternToken[] = [];
  const seen = new Set<Field>();
  let i = 0;
  while (i < pattern.length) {
    const token = TOKENS.find(([text]) => pattern.startsWith(text, i));
    if (token) {
      const [text, field] = token;
      const slot = field === 'year2' ? 'year4' : field;
      if (seen.has(slot)) return bad(`the pattern has more than one ${field.startsWith('year') ? 'year' : text} token`);
      seen.add(slot);
      tokens.push({ kind: 'field', field, width: text.length });
      i += text.length;
    } else {
      const char = pattern[i]!;
      if (TOKEN_LETTERS.has(char)) {
        return bad(`the pattern has a stray ${char} at position ${i + 1} (tokens are YYYY YY MM DD HH mm ss SSS)`);
      }
      tokens.push({ kind: 'literal', char });
      i += 1;
    }
  }
  if (!seen.has('year4') || !seen.has('month') || !seen.has('day')) {
    return bad('the pattern needs a year (YYYY or YY), a month (MM) and a day (DD)');
  }
  return { ok: true, value: tokens };
}

function isDigits(text: string, from: number, width: number): boolean {
  if (from + width > text.length) return false;
  for (let i = from; i < from + width; i++) {
    const c = text.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}

function matchPattern(text: string, tokens: readonly PatternToken[]): WallTime | undefined {
  const wall: WallTime = { year: 0, month: 0, day: 0, hour: 0, minute: 0, second: 0, millisecond: 0 };
  let at = 0;
  for (const token of tokens) {
    if (token.kind === 'literal') {
      if (text[at] !== token.char) return undefined;
      at += 1;
      continue;
    }
    if (!isDigits(text, at, token.width)) return undefined;
    const n = Number(text.slice(at, at + token.width));
    at += token.width;
    switch (token.field) {
      case 'year4': wall.year = n; break;
      case 'year2': wall.year = n < TWO_DIGIT_YEAR_PIVOT ? 2000 + n : 1900 + n; break;
      case 'month': wall.month = n; break;
      case 'day': wall.day = n; break;
      case 'hour': wall.hour = n; break;
      case 'minute': wall.minute = n; break;
      case 'second': wall.second = n; break;
      case 'millisecond': wall.millisecond = n; break;
    }
  }
  return at === text.length ? wall : undefined;
}

// ---- the formats ----

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?([Zz]|[+-]\d{2}:\d{2})?$/;

function parseRfc3339(text: string, tz: string | undefined): Result<string> {
  if (isDateTime(text)) return { ok: true, value: text };
  const m = RFC3339.exec(text);
  if (!m) return bad('not an RFC 3339 date-time (YYYY-MM-DDTHH:mm:ss with an optional fraction and offset)');
  const second = Number(m[6]);
  const wall: WallTime = {
    year: Number(m[1]),
    month: Number(m[2]),
    day: Number(m[3]),
    hour: Number(m[4]),
    minute: Number(m[5]),
    second: second === 60 ? 59 : second,
    millisecond: m[7] === undefined ? 0 : Number(m[7].slice(0, 3).padEnd(3, '0')),
  };
  if (!validWallTime(wall)) return bad('not a valid calendar date and time');
  let zone: Result<TimeZone>;
  if (m[8] === undefined) {
    zone = resolveTimeZone(tz);
  } else {
    const offsetMs = parseOffset(m[8]);
    if (offsetMs === undefined) return bad('not a valid UTC offset');
    zone = { ok: true, value: { kind: 'fixed', offsetMs } };
  }
  if (!zone.ok) return zone;
  return toIso(wallTimeToEpochMs(wall, zone.value));
}

// Any number of fraction digits (Python's time.time() writes six), kept to the millisecond as
// rfc3339 fractions are.
const EPOCH_S = /^([+-]?)(\d+)(?:\.(\d+))?$/;
const EPOCH_MS = /^([+-]?)(\d+)$/;

function parseEpoch(text: string, unit: 's' | 'ms'): Result<string> {
  const m = (unit === 's' ? EPOCH_S : EPOCH_MS).exec(text);
  if (!m) {
    return bad(unit === 's' ? 'not an epoch in seconds (an integer, with an optional fraction)' : 'not an epoch in milliseconds (an integer)');
  }
  const digits = m[2]!.replace(/^0+(?=\d)/, '');
  if (digits.length > 16) return bad('outside the years 0000-9999');
  // m[3] (epoch_s only): the fraction, as milliseconds.
  let ms = BigInt(digits) * (unit === 's' ? 1000n : 1n) + BigInt((m[3] ?? '').slice(0, 3).padEnd(3, '0'));
  if (m[1] === '-') ms = -ms;
  if (ms < BigInt(MIN_MS) || ms > BigInt(MAX_MS)) return bad('outside the years 0000-9999');
  return toIso(Number(ms));
}

function parsePattern(text: string, pattern: string | undefined, tz: string | undefined): Result<string> {
  if (pattern === undefined) return bad('format pattern needs a pattern');
  const tokens = compilePattern(pattern);
  if (!tokens.ok) return tokens;
  const wall = matchPattern(text, tokens.value);
  if (!wall) return bad('does not match the pattern');
  if (!validWallTime(wall)) return bad('not a valid calendar date and time');
  const zone = resolveTimeZone(tz);
  if (!zone.ok) return zone;
  return toIso(wallTimeToEpochMs(wall, zone.value));
}

// A present value of a datetime target (text; a JSON number is read as its text) to RFC 3339 UTC.
export function parseDatetime(value: unknown, rule: DatetimeRule): Result<string> {
  let text: string;
  if (typeof value === 'string') text = value;
  else if (typeof value === 'number' && Number.isFinite(value)) text = String(value);
  else return bad(`expected a date-time as text or a number, got ${Array.isArray(value) ? 'an array' : typeof value}`);
  const format = rule.format ?? (rule.pattern !== undefined ? 'pattern' : 'rfc3339');
  switch (format) {
    case 'rfc3339':
      return parseRfc3339(text, rule.tz);
    case 'epoch_s':
      return parseEpoch(text, 's');
    case 'epoch_ms':
      return parseEpoch(text, 'ms');
    case 'pattern':
      return parsePattern(text, rule.pattern, rule.tz);
  }
}
