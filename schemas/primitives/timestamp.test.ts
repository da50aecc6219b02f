import { describe, expect, it } from 'vitest';
import { canonicalInstant, dateTimeMs, dateTimeSchema, fullDateSchema, isDateTime, isFullDate, replaceLeapSeconds } from './timestamp.ts';
import { OUT_OF_RANGE, SCHEMA, check, expectAccepted, expectRefused, onData, onEvent, one, type Mutation } from '../validation/test-kit.ts';

// Conventions: RFC 3339 with explicit offset or Z; colon in offset required (-04:00, not -0400);
// lowercase t or z refused; epoch numbers refused; dates without offset refused.
const ACCEPTED = [
  '2026-09-01T12:00:00Z',
  '2026-09-01T12:00:00+00:00',
  '2026-09-01T12:00:00-00:00',
  '2026-09-01T08:00:00-04:00',
  '2026-09-01T17:30:00+05:30',
  '2026-09-01T23:59:59+14:00',
  '2026-09-01T12:00:00.5Z',
  '2026-09-01T12:00:00.123Z',
  '2026-09-01T12:00:00.123456789-04:00',
  '2024-02-29T00:00:00Z',
  '2000-02-29T00:00:00Z',
  '2016-12-31T23:59:60Z',
  '1970-01-01T00:00:00Z',
  '0001-01-01T00:00:00Z',
  '9999-12-31T23:59:59Z',
  '9999-12-31T23:59:60.999Z',
  '2026-09-01T00:00:00+23:59',
  '0001-01-01T23:58:00+23:58',
];

const REFUSED: [string, unknown][] = [
  // Outside the instants every store holds: PostgreSQL has no year 0, and an offset can carry a
  // local time inside the range to a UTC instant outside it.
  ['year 0', '0000-02-29T00:00:00Z'],
  ['before year 1 once in UTC', '0001-01-01T00:00:00+00:01'],
  ['after year 9999 once in UTC', '9999-12-31T23:59:59-00:01'],
  ['offset without colon', '2026-09-01T08:00:00-0400'],
  ['offset without colon (+)', '2026-09-01T17:30:00+0530'],
  ['hour-only offset', '2026-09-01T08:00:00-04'],
  ['lower-case t', '2026-09-01t12:00:00Z'],
  ['lower-case z', '2026-09-01T12:00:00z'],
  ['lower-case t and z', '2026-09-01t12:00:00z'],
  ['epoch seconds', 1788264000],
  ['epoch milliseconds', 1788264000000],
  ['epoch seconds as a string', '1788264000'],
  ['date only', '2026-09-01'],
  ['no offset', '2026-09-01T12:00:00'],
  ['no offset with fraction', '2026-09-01T12:00:00.123'],
  ['space instead of T', '2026-09-01 12:00:00Z'],
  ['no seconds', '2026-09-01T12:00Z'],
  ['empty fraction', '2026-09-01T12:00:00.Z'],
  ['comma fraction', '2026-09-01T12:00:00,5Z'],
  ['February 30th', '2026-02-30T00:00:00Z'],
  ['February 29th of a common year', '2026-02-29T00:00:00Z'],
  ['February 29th of 1900', '1900-02-29T00:00:00Z'],
  ['April 31st', '2026-04-31T00:00:00Z'],
  ['month 13', '2026-13-01T00:00:00Z'],
  ['month 00', '2026-00-01T00:00:00Z'],
  ['day 00', '2026-09-00T00:00:00Z'],
  ['hour 24', '2026-09-01T24:00:00Z'],
  ['minute 60', '2026-09-01T12:60:00Z'],
  ['second 61', '2026-09-01T12:00:61Z'],
  ['offset hour 24', '2026-09-01T12:00:00+24:00'],
  ['offset minute 60', '2026-09-01T12:00:00+05:60'],
  ['Z and an offset', '2026-09-01T12:00:00Z+00:00'],
  ['two-digit year', '26-09-01T12:00:00Z'],
  ['single-digit month', '2026-9-01T12:00:00Z'],
  ['week date', '2026-W36-2T12:00:00Z'],
  ['leading space', ' 2026-09-01T12:00:00Z'],
  ['trailing space', '2026-09-01T12:00:00Z '],
  ['trailing newline', '2026-09-01T12:00:00Z\n'],
  ['RFC 2822', 'Tue, 01 Sep 2026 12:00:00 GMT'],
  ['empty', ''],
  ['null', null],
  ['an object', { seconds: 1 }],
];

describe('isDateTime / dateTimeSchema', () => {
  it.each(ACCEPTED)('accepts %s', (text) => {
    expect(isDateTime(text)).toBe(true);
    expect(dateTimeSchema.safeParse(text).success).toBe(true);
  });
  it.each(REFUSED)('refuses %s', (_name, value) => {
    if (typeof value === 'string') expect(isDateTime(value)).toBe(false);
    expect(dateTimeSchema.safeParse(value).success).toBe(false);
  });
});

describe('isFullDate / fullDateSchema', () => {
  it.each(['1990-12-10', '2000-02-29', '2024-02-29', '0000-02-29', '0001-01-01'])('accepts %s', (text) => {
    expect(isFullDate(text)).toBe(true);
    expect(fullDateSchema.safeParse(text).success).toBe(true);
  });
  it.each(one(['1990-02-30', '1900-02-29', '2023-02-29', '1990-13-01', '1990-00-10', '1990-12-00', '1990-12-32', '1990-1-10',
    '90-12-10', '19901210', '1990-12-10T00:00:00Z', '1990-12-10Z', ' 1990-12-10', '', 19901210, null]))('refuses %j', (value) => {
    if (typeof value === 'string') expect(isFullDate(value)).toBe(false);
    expect(fullDateSchema.safeParse(value).success).toBe(false);
  });
});

describe('dateTimeMs', () => {
  it('applies the offset', () => {
    expect(dateTimeMs('2026-09-01T08:00:00-04:00')).toBe(Date.parse('2026-09-01T12:00:00Z'));
    expect(dateTimeMs('2026-09-01T17:30:00+05:30')).toBe(Date.parse('2026-09-01T12:00:00Z'));
    expect(dateTimeMs('2026-09-01T12:00:00-00:00')).toBe(Date.parse('2026-09-01T12:00:00Z'));
  });
  it('keeps milliseconds and truncates finer fractions', () => {
    expect(dateTimeMs('2026-09-01T12:00:00.5Z')).toBe(Date.parse('2026-09-01T12:00:00Z') + 500);
    expect(dateTimeMs('2026-09-01T12:00:00.123456789Z')).toBe(Date.parse('2026-09-01T12:00:00Z') + 123);
  });
  it('counts a leap second, whatever its fraction, as the last millisecond of its minute', () => {
    expect(dateTimeMs('2016-12-31T23:59:60Z')).toBe(Date.parse('2016-12-31T23:59:59.999Z'));
    expect(dateTimeMs('2016-12-31T23:59:60.5Z')).toBe(Date.parse('2016-12-31T23:59:59.999Z'));
    expect(dateTimeMs('2016-12-31T18:59:60-05:00')).toBe(Date.parse('2016-12-31T23:59:59.999Z'));
    // After the minute's every other instant, before the next minute.
    expect(dateTimeMs('2016-12-31T23:59:60Z')).toBeGreaterThan(dateTimeMs('2016-12-31T23:59:59.998Z'));
    expect(dateTimeMs('2016-12-31T23:59:60Z')).toBeLessThan(dateTimeMs('2017-01-01T00:00:00Z'));
  });

  it('renders every accepted instant one way, in UTC with milliseconds, a store can read back', () => {
    expect(canonicalInstant('2026-09-01T00:00:00+23:59')).toBe('2026-08-31T00:01:00.000Z');
    expect(canonicalInstant('2016-12-31T18:59:60.25-05:00')).toBe('2016-12-31T23:59:59.999Z');
    expect(canonicalInstant('2026-09-01T12:00:00.123456789Z')).toBe('2026-09-01T12:00:00.123Z');
    expect(canonicalInstant('0001-01-01T23:58:00+23:58')).toBe('0001-01-01T00:00:00.000Z');
  });

  it('rewrites leap seconds inside an event, and nothing else', () => {
    const event = { occurred_at: '2016-12-31T23:59:60Z', data: { opened_at: '2016-12-31T23:59:60.5+01:00', memo: 'at 23:59:60', list: [{ at: '1972-06-30T23:59:60Z' }], kept: '2026-09-01T12:00:00+05:30' } };
    replaceLeapSeconds(event);
    expect(event).toEqual({ occurred_at: '2016-12-31T23:59:59.999Z', data: { opened_at: '2016-12-31T23:59:59.999+01:00', memo: 'at 23:59:60', list: [{ at: '1972-06-30T23:59:59.999Z' }], kept: '2026-09-01T12:00:00+05:30' } });
  });
  it('handles dates before the epoch', () => {
    expect(dateTimeMs('1969-12-31T23:59:59Z')).toBe(-1000);
  });
});

// Through the live validation: every date-time member refuses a bad format at its own path.
describe('date-time members in an item', () => {
  const members: [string, (value: unknown) => Mutation, 'party' | 'movement' | 'relationship' | 'account', string][] = [
    ['occurred_at', (v) => onEvent('occurred_at', v), 'movement', 'event.occurred_at'],
    ['recorded_at', (v) => onEvent('recorded_at', v), 'movement', 'event.recorded_at'],
    ['party created_at', (v) => onData('created_at', v), 'party', 'event.data.created_at'],
    ['party kyc.updated_at', (v) => onData('kyc.updated_at', v), 'party', 'event.data.kyc.updated_at'],
    ['account closed_at', (v) => onData('closed_at', v), 'account', 'event.data.closed_at'],
    ['relationship valid_to', (v) => onData('valid_to', v), 'relationship', 'event.data.valid_to'],
  ];
  describe.each(members)('%s', (_name, set, family, path) => {
    it.each(['2026-09-01T11:00:00Z', '2026-09-01T07:00:00-04:00', '2026-09-01T11:00:00.000001+00:00'])('accepts %s', (value) =>
      expectAccepted(check(family, set(value))));
    it.each(REFUSED)('refuses %s', (_what, value) => expectRefused(check(family, set(value)), SCHEMA, path));
  });

  it('refuses an occurred_at beyond the future skew with timestamp_out_of_range, not schema', () =>
    expectRefused(check('movement', onEvent('occurred_at', '2026-09-01T12:05:01Z')), OUT_OF_RANGE, 'event.occurred_at'));

  it('never converts an accepted timestamp: the text stays as sent', () => {
    const result = check('movement', onEvent('occurred_at', '2026-09-01T07:59:00.120-04:00'));
    expectAccepted(result);
    if (result.ok) expect(result.event.occurred_at).toBe('2026-09-01T07:59:00.120-04:00');
  });
});
