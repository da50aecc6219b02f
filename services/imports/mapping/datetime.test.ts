import { describe, expect, it } from 'vitest';
import { compilePattern, parseDatetime, resolveTimeZone, wallTimeToEpochMs, type DatetimeRule } from './datetime.ts';

const TS = 'svc:validation/timestamp_out_of_range';
const parsed = (value: unknown, rule: DatetimeRule = {}) => parseDatetime(value, rule);
const at = (iso: string) => ({ ok: true, value: iso });

describe('rfc3339 (default format)', () => {
  // As live ingest takes a date-time: kept as written, so the imported fact has the content of the
  // same fact sent live.
  it.each([
    '2019-09-01T12:00:00Z',
    '2019-09-01T12:00:00+02:00',
    '2019-09-01T12:00:00-04:30',
    '2019-09-01T12:00:00-00:00',
    '2019-09-01T12:00:00.5Z',
    '2019-09-01T12:00:00.123Z',
    '2019-09-01T12:00:00.123999Z',
    '2016-12-31T23:59:60Z',
    '2024-02-29T00:00:00Z',
    '9999-12-31T23:59:59.999Z',
  ])('%s as written', (input) => expect(parsed(input)).toEqual(at(input)));

  // What only a file writes: to UTC with milliseconds.
  it.each([
    ['2019-09-01t12:00:00z', '2019-09-01T12:00:00.000Z'],
    ['2019-09-01 12:00:00Z', '2019-09-01T12:00:00.000Z'],
    ['2019-09-01 12:00:00+02:00', '2019-09-01T10:00:00.000Z'],
    ['2019-09-01t00:30:00+01:00', '2019-08-31T23:30:00.000Z'],
    ['2019-09-01 12:00:00.123999Z', '2019-09-01T12:00:00.123Z'], // truncated, not rounded
    ['2016-12-31 23:59:60Z', '2016-12-31T23:59:59.000Z'], // leap second read as :59
    ['2000-02-29 00:00:00Z', '2000-02-29T00:00:00.000Z'],
    ['0050-06-01 00:00:00z', '0050-06-01T00:00:00.000Z'],
    ['0000-01-01T00:00:00Z', '0000-01-01T00:00:00.000Z'], // not a year live ingest takes
  ])('%s', (input, expected) => expect(parsed(input)).toEqual(at(expected)));

  it('without an offset, the time is read in tz (UTC when unset)', () => {
    expect(parsed('2019-09-01 12:00:00')).toEqual(at('2019-09-01T12:00:00.000Z'));
    expect(parsed('2019-09-01T12:00:00', { tz: '+02:00' })).toEqual(at('2019-09-01T10:00:00.000Z'));
    expect(parsed('2019-09-01T12:00:00', { tz: 'Z' })).toEqual(at('2019-09-01T12:00:00.000Z'));
    expect(parsed('2019-09-01T12:00:00', { tz: 'Europe/Prague' })).toEqual(at('2019-09-01T10:00:00.000Z'));
    expect(parsed('2019-01-01T12:00:00', { tz: 'Europe/Prague' })).toEqual(at('2019-01-01T11:00:00.000Z'));
  });
  it('an explicit offset wins over tz', () =>
    expect(parsed('2019-09-01 12:00:00Z', { tz: 'Europe/Prague' })).toEqual(at('2019-09-01T12:00:00.000Z')));

  it.each([
    '2019-02-30T00:00:00Z', '2023-02-29T00:00:00Z', '1900-02-29T00:00:00Z', '2019-04-31T00:00:00Z', '2019-13-01T00:00:00Z',
    '2019-00-10T00:00:00Z', '2019-01-00T00:00:00Z', '2019-01-01T24:00:00Z', '2019-01-01T12:60:00Z', '2019-01-01T12:00:61Z',
    '2019-01-01T12:00:00+24:00', '2019-01-01T12:00:00+01:60', '2019-01-01T12:00:00+0100', '2019-01-01T12:00Z', '2019-01-01',
    '19-01-01T12:00:00Z', '2019-1-01T12:00:00Z', ' 2019-01-01T12:00:00Z', '2019-01-01T12:00:00.Z', 'yesterday', '',
    '0000-01-01T00:00:00+01:00', '9999-12-31T23:59:59-01:00',
  ])('refuses %j', (input) => expect(parsed(input)).toMatchObject({ ok: false, code: TS }));
});

describe('epochs', () => {
  it.each([
    ['0', '1970-01-01T00:00:00.000Z'],
    ['1567339200', '2019-09-01T12:00:00.000Z'],
    ['+1567339200', '2019-09-01T12:00:00.000Z'],
    ['-1', '1969-12-31T23:59:59.000Z'],
    ['1567339200.5', '2019-09-01T12:00:00.500Z'],
    ['1567339200.123', '2019-09-01T12:00:00.123Z'],
    // Microseconds (Python's time.time()): kept to the millisecond, as rfc3339 fractions are.
    ['1567339200.123456', '2019-09-01T12:00:00.123Z'],
    ['-0.5', '1969-12-31T23:59:59.500Z'],
    ['253402300799', '9999-12-31T23:59:59.000Z'],
    ['-62167219200', '0000-01-01T00:00:00.000Z'],
  ])('epoch_s %s', (input, expected) => expect(parsed(input, { format: 'epoch_s' })).toEqual(at(expected)));
  it('epoch_s from a JSON number', () => {
    expect(parsed(1567339200, { format: 'epoch_s' })).toEqual(at('2019-09-01T12:00:00.000Z'));
    expect(parsed(1567339200.25, { format: 'epoch_s' })).toEqual(at('2019-09-01T12:00:00.250Z'));
  });
  it.each(['1567339200.', '1.5e9', '', ' 1', '1,5', '253402300800', '-62167219201', '99999999999999999999999', 'abc'])(
    'epoch_s refuses %j', (input) => expect(parsed(input, { format: 'epoch_s' })).toMatchObject({ ok: false, code: TS }));

  it.each([
    ['1567339200123', '2019-09-01T12:00:00.123Z'],
    ['-1', '1969-12-31T23:59:59.999Z'],
    ['0', '1970-01-01T00:00:00.000Z'],
  ])('epoch_ms %s', (input, expected) => expect(parsed(input, { format: 'epoch_ms' })).toEqual(at(expected)));
  it('epoch_ms from a JSON number, and never with a fraction', () => {
    expect(parsed(1567339200123, { format: 'epoch_ms' })).toEqual(at('2019-09-01T12:00:00.123Z'));
    expect(parsed('1567339200123.5', { format: 'epoch_ms' })).toMatchObject({ ok: false, code: TS });
    expect(parsed(1.5, { format: 'epoch_ms' })).toMatchObject({ ok: false, code: TS });
    expect(parsed('253402300800000', { format: 'epoch_ms' })).toMatchObject({ ok: false, code: TS });
  });
  it('epochs ignore tz', () =>
    expect(parsed('0', { format: 'epoch_s', tz: 'Europe/Prague' })).toEqual(at('1970-01-01T00:00:00.000Z')));
});

describe('pattern', () => {
  const prague = { format: 'pattern', pattern: 'DD.MM.YYYY HH:mm', tz: 'Europe/Prague' } as const;
  it('DD.MM.YYYY HH:mm in Europe/Prague: winter (+01:00) and summer (+02:00)', () => {
    expect(parsed('15.01.2024 10:30', prague)).toEqual(at('2024-01-15T09:30:00.000Z'));
    expect(parsed('15.07.2024 10:30', prague)).toEqual(at('2024-07-15T08:30:00.000Z'));
  });
  it('a wall-clock time skipped by spring forward moves forward by the gap (02:30 is 03:30 CEST)', () =>
    expect(parsed('31.03.2024 02:30', prague)).toEqual(at('2024-03-31T01:30:00.000Z')));
  it('a wall-clock time repeated by fall back is the earlier one (02:30 CEST)', () =>
    expect(parsed('27.10.2024 02:30', prague)).toEqual(at('2024-10-27T00:30:00.000Z')));
  it('just around the transitions', () => {
    expect(parsed('31.03.2024 01:59', prague)).toEqual(at('2024-03-31T00:59:00.000Z'));
    expect(parsed('31.03.2024 03:00', prague)).toEqual(at('2024-03-31T01:00:00.000Z'));
    expect(parsed('27.10.2024 01:59', prague)).toEqual(at('2024-10-26T23:59:00.000Z'));
    expect(parsed('27.10.2024 03:00', prague)).toEqual(at('2024-10-27T02:00:00.000Z'));
  });
  it('missing HH mm ss SSS are 0; tz defaults to UTC', () =>
    expect(parsed('2019-09-01', { format: 'pattern', pattern: 'YYYY-MM-DD' })).toEqual(at('2019-09-01T00:00:00.000Z')));
  it('all tokens, and letters that are no token are literals', () =>
    expect(parsed('2019/09/01T12h34:56.789', { format: 'pattern', pattern: 'YYYY/MM/DDTHHhmm:ss.SSS' }))
      .toEqual(at('2019-09-01T12:34:56.789Z')));
  it('pattern without format means format pattern', () =>
    expect(parsed('01.09.2019', { pattern: 'DD.MM.YYYY' })).toEqual(at('2019-09-01T00:00:00.000Z')));
  it('a fixed-offset tz', () =>
    expect(parsed('20190901 1200', { format: 'pattern', pattern: 'YYYYMMDD HHmm', tz: '-05:00' })).toEqual(at('2019-09-01T17:00:00.000Z')));

  describe('YY (extension: 00-49 is 20xx, 50-99 is 19xx)', () => {
    const berka = { format: 'pattern', pattern: 'YYMMDD' } as const;
    it.each([
      ['930101', '1993-01-01T00:00:00.000Z'],
      ['981231', '1998-12-31T00:00:00.000Z'],
      ['500101', '1950-01-01T00:00:00.000Z'],
      ['491231', '2049-12-31T00:00:00.000Z'],
      ['000229', '2000-02-29T00:00:00.000Z'],
    ])('%s', (input, expected) => expect(parsed(input, berka)).toEqual(at(expected)));
    it('a JSON number is read as its digits', () => expect(parsed(930101, berka)).toEqual(at('1993-01-01T00:00:00.000Z')));
    it('Berka card dates: YYMMDD HH:mm:ss', () =>
      expect(parsed('931107 00:00:00', { pattern: 'YYMMDD HH:mm:ss', tz: 'Europe/Prague' })).toEqual(at('1993-11-06T23:00:00.000Z')));
    it.each(['930230', '93011', '9301011', '93-01-01', '931301'])('refuses %j', (input) =>
      expect(parsed(input, berka)).toMatchObject({ ok: false, code: TS }));
  });

  it.each([
    ['1.9.2019', 'DD.MM.YYYY'], // each token is exactly its width
    ['01-09-2019', 'DD.MM.YYYY'], // literals must match
    ['01.09.2019 ', 'DD.MM.YYYY'],
    ['01.09.201', 'DD.MM.YYYY'],
    ['30.02.2019', 'DD.MM.YYYY'],
    ['01.09.2019 24:00', 'DD.MM.YYYY HH:mm'],
    ['01.09.2019 12:60', 'DD.MM.YYYY HH:mm'],
    ['0a.09.2019', 'DD.MM.YYYY'],
    ['01.09.２０１９', 'DD.MM.YYYY'], // ASCII digits only
  ])('refuses %j for %s', (input, pattern) => expect(parsed(input, { format: 'pattern', pattern })).toMatchObject({ ok: false, code: TS }));

  it.each(['YYY-MM-DD', 'YYYY-MM-D', 'DD.MM', 'YYYY-MM', 'YYYY-MM-DD YYYY', 'YYMMDD YY', 'YYYY-MM-DD HH:mm:ss.SS', 'YYYY-MM-DD HH:mmm'])(
    'refuses the pattern %s', (pattern) => {
      expect(compilePattern(pattern)).toMatchObject({ ok: false, code: TS });
      expect(parsed('2019-09-01', { format: 'pattern', pattern })).toMatchObject({ ok: false, code: TS });
    });
  it('format pattern without a pattern is refused', () =>
    expect(parsed('2019-09-01', { format: 'pattern' })).toMatchObject({ ok: false, code: TS }));
});

describe('time zones', () => {
  it.each(['Z', '+00:00', '-12:00', '+14:00', '+05:30', 'UTC', 'Europe/Prague', 'America/New_York', 'Asia/Kolkata'])('accepts %s', (tz) =>
    expect(resolveTimeZone(tz).ok).toBe(true));
  it.each(['Mars/Olympus', '+25:00', '+01:60', '+0100', '+1', 'z', 'CET+1', ''])('refuses %j', (tz) => {
    expect(resolveTimeZone(tz)).toMatchObject({ ok: false, code: TS });
    expect(parsed('2019-09-01T12:00:00', { tz })).toMatchObject({ ok: false, code: TS });
  });
  it('America/New_York gap and overlap', () => {
    const ny = resolveTimeZone('America/New_York');
    if (!ny.ok) throw new Error('zone');
    const wall = (day: number, month: number, hour: number, minute: number) =>
      new Date(wallTimeToEpochMs({ year: 2024, month, day, hour, minute, second: 0, millisecond: 0 }, ny.value)).toISOString();
    expect(wall(10, 3, 2, 30)).toBe('2024-03-10T07:30:00.000Z'); // skipped: 03:30 EDT
    expect(wall(3, 11, 1, 30)).toBe('2024-11-03T05:30:00.000Z'); // twice: 01:30 EDT, the earlier
    expect(wall(1, 7, 12, 0)).toBe('2024-07-01T16:00:00.000Z');
  });
  it('a zone whose offset has seconds (local mean time before 1891 in Prague)', () =>
    expect(parsed('1850-01-01 00:00:00', { tz: 'Europe/Prague' })).toEqual(at('1849-12-31T23:02:16.000Z')));
  it('a half-hour daylight saving shift (Australia/Lord_Howe)', () =>
    expect(parsed('2024-01-15T12:00:00', { tz: 'Australia/Lord_Howe' })).toEqual(at('2024-01-15T01:00:00.000Z')));
});

it('refuses non-text values and names no value in reasons', () => {
  for (const value of [true, { a: 1 }, [1]]) expect(parsed(value)).toMatchObject({ ok: false, code: TS });
  for (const [value, rule] of [
    ['4111111111111111', {}],
    ['4111111111111111', { format: 'pattern', pattern: 'YYYYMMDD' }],
    ['4111111111111111', { format: 'epoch_s' }],
    ['4111111111111111', { format: 'epoch_ms' }],
  ] as const) {
    const r = parsed(value, rule);
    expect(r.ok).toBe(false);
    expect(JSON.stringify(r)).not.toContain('4111');
  }
});
