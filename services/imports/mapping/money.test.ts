import { describe, expect, it } from 'vitest';
import { evaluateMoney, parseAmount, type AmountOptions, type MoneyContext, type MoneyRule } from './money.ts';
import type { SourceRow } from './values.ts';

const SCHEMA = 'svc:validation/schema';
const MISMATCH = 'svc:validation/money_scale_mismatch';
const amount = (text: string, options: Partial<AmountOptions> = {}) => parseAmount(text, { scale: 2, ...options });
const minor = (value: string) => ({ ok: true, value });

describe('parseAmount, decimal units', () => {
  it.each([
    ['12.5', '1250'],
    ['12.50', '1250'],
    ['12', '1200'],
    ['+12.5', '1250'],
    ['-12.5', '-1250'],
    ['  12.50  ', '1250'],
    ['(12.50)', '-1250'],
    ['( 12.50 )', '-1250'],
    ['.5', '50'],
    ['5.', '500'],
    ['0', '0'],
    ['-0.00', '0'],
    ['(0)', '0'],
    ['007.10', '710'],
    ['12345678901234567890123456.78', '1234567890123456789012345678'],
  ])('%j', (text, expected) => expect(amount(text)).toEqual(minor(expected)));

  it('accounting negative with decimal "," and group "." : (1.234,56)', () =>
    expect(amount('(1.234,56)', { decimalSeparator: ',', groupSeparator: '.' })).toEqual(minor('-123456')));
  it('group separators before the decimal separator, in groups of three or the Indian grouping', () => {
    const comma = { groupSeparator: ',' };
    expect(amount('1,234,567.89', comma)).toEqual(minor('123456789'));
    expect(amount('(1,234.50)', comma)).toEqual(minor('-123450'));
    expect(amount('1 234,5', { decimalSeparator: ',', groupSeparator: ' ' })).toEqual(minor('123450'));
    expect(amount('12,34,567.00', comma)).toEqual(minor('123456700'));
    expect(amount('1,00,000', comma)).toEqual(minor('10000000'));
  });
  it.each(['12,34', '12,34.00', '1,2345', '1234,567', '1,23,4567', '12,345,67'])('refuses %j: groups of other sizes, most likely a decimal comma', (text) =>
    expect(amount(text, { groupSeparator: ',' })).toMatchObject({ ok: false, code: SCHEMA }));
  it('zeros past the scale change nothing, so they are accepted (never rounded)', () => {
    expect(amount('1000.00', { scale: 0 })).toEqual(minor('1000'));
    expect(amount('12.500', { scale: 2 })).toEqual(minor('1250'));
  });
  it('scientific notation in decimal units, exactly', () => {
    expect(amount('1.916920493E7', {})).toEqual(minor('1916920493'));
    expect(amount('1.5e-2', { scale: 3 })).toEqual(minor('15'));
    expect(amount('-2E3', {})).toEqual(minor('-200000'));
    expect(amount('1.234e-3', { scale: 2 })).toMatchObject({ ok: false, code: MISMATCH });
    expect(amount('5e2', { units: 'minor' })).toMatchObject({ ok: false });
  });
  it('scale 0 and scale 18', () => {
    expect(amount('1000', { scale: 0 })).toEqual(minor('1000'));
    expect(amount('1.000000000000000001', { scale: 18 })).toEqual(minor('1000000000000000001'));
  });

  it.each([
    ['12.345', {}],
    ['0.001', {}],
    ['1000.05', { scale: 1 }],
    ['1.5', { scale: 0 }],
    ['(1.234,567)', { decimalSeparator: ',', groupSeparator: '.' }],
  ])('more fraction digits than the scale: %j is money_scale_mismatch', (text, options) =>
    expect(amount(text, options)).toMatchObject({ ok: false, code: MISMATCH }));

  it.each([
    ['', {}], ['-', {}], ['+', {}], ['()', {}], ['.', {}], ['1.2.3', {}], ['1e', {}], ['e5', {}], ['1e999', {}], ['12,50', {}], ['$12', {}], ['12 EUR', {}],
    ['1 000', {}], ['(-5)', {}], ['(+5)', {}], ['--5', {}], ['+-5', {}], ['- 5', {}], ['5-', {}], ['(5', {}], ['5)', {}],
    ['0x10', {}], ['Infinity', {}], ['abc', {}], ['１２', {}],
    ['1,,000', { groupSeparator: ',' }], [',5', { groupSeparator: ',' }], ['1,.5', { groupSeparator: ',' }], ['1,', { groupSeparator: ',' }],
    ['1.2,3', { groupSeparator: ',' }], // a group separator after the decimal separator
    ['1,234,56', { decimalSeparator: ',', groupSeparator: '.' }], // two decimal separators
    ['12.5', { decimalSeparator: ',' }],
    ['1.5', { groupSeparator: '.' }], // the same separator twice
  ] as Array<[string, Partial<AmountOptions>]>)('malformed %j %j is schema', (text, options) =>
    expect(amount(text, options)).toMatchObject({ ok: false, code: SCHEMA }));

  it('at most 38 digits of minor units; leading zeros do not count', () => {
    expect(amount(`${'9'.repeat(36)}.99`)).toEqual(minor('9'.repeat(38)));
    expect(amount(`-${'9'.repeat(36)}.99`)).toEqual(minor(`-${'9'.repeat(38)}`));
    expect(amount(`${'0'.repeat(10)}${'9'.repeat(36)}`)).toEqual(minor(`${'9'.repeat(36)}00`));
    expect(amount(`${'9'.repeat(37)}`)).toMatchObject({ ok: false, code: SCHEMA });
  });
});

describe('parseAmount, minor units', () => {
  const units = 'minor' as const;
  it.each([
    ['12345', '12345'],
    ['-12345', '-12345'],
    ['+5', '5'],
    ['(12345)', '-12345'],
    ['000', '0'],
  ])('%j', (text, expected) => expect(amount(text, { units })).toEqual(minor(expected)));
  it('group separators are allowed', () => expect(amount('1,234', { units, groupSeparator: ',' })).toEqual(minor('1234')));
  it.each(['12.5', '12.', '.5', '1e3', ''])('%j is not an integer: schema', (text) =>
    expect(amount(text, { units })).toMatchObject({ ok: false, code: SCHEMA }));
  it('the scale does not limit minor units', () => expect(amount('123456', { units, scale: 0 })).toEqual(minor('123456')));
});

describe('evaluateMoney', () => {
  const csv = (cells: Record<string, string>): SourceRow => ({ kind: 'csv', get: (column) => cells[column] });
  const registry = new Map([['EUR', 2], ['JPY', 0], ['CZK', 2]]);
  const ctx: MoneyContext = { nullValues: new Set(['NULL']), scaleOf: (asset) => registry.get(asset) };
  const rule = (extra: Partial<MoneyRule> = {}): MoneyRule => ({ value: { from: 'amt' }, asset: { from: 'cur' }, ...extra });

  it('value and asset from columns, scale from the registry (scaleOf)', () =>
    expect(evaluateMoney(rule(), csv({ amt: '12.5', cur: 'EUR' }), ctx)).toEqual({ kind: 'value', value: { value: '1250', asset: 'EUR', scale: 2 } }));
  it('the scale of the rule wins over the registry', () =>
    expect(evaluateMoney(rule({ scale: 3 }), csv({ amt: '12.5', cur: 'EUR' }), ctx)).toEqual({ kind: 'value', value: { value: '12500', asset: 'EUR', scale: 3 } }));
  it('an asset without a registry scale and no scale in the rule is money_scale_mismatch', () =>
    expect(evaluateMoney(rule(), csv({ amt: '12.5', cur: 'XXX' }), ctx)).toMatchObject({ kind: 'error', code: MISMATCH }));
  it.each([[{}], [{ scale: 2 }]])('a malformed asset code is schema, with a scale in the rule or without (%j)', (extra) =>
    expect(evaluateMoney(rule(extra), csv({ amt: '12.5', cur: 'usd' }), ctx)).toMatchObject({ kind: 'error', code: SCHEMA }));
  it('...but a scale in the rule is enough', () =>
    expect(evaluateMoney(rule({ scale: 0 }), csv({ amt: '7', cur: 'XXX' }), ctx)).toEqual({ kind: 'value', value: { value: '7', asset: 'XXX', scale: 0 } }));
  it('asset part: const', () =>
    expect(evaluateMoney(rule({ asset: { const: 'CZK' } }), csv({ amt: '700.00' }), ctx)).toEqual({ kind: 'value', value: { value: '70000', asset: 'CZK', scale: 2 } }));
  it('asset part: trim, case, map', () => {
    const r = rule({ asset: { from: 'cur', trim: true, case: 'upper', map: { KC: 'CZK' } } });
    expect(evaluateMoney(r, csv({ amt: '1', cur: ' kc ' }), ctx)).toMatchObject({ kind: 'value', value: { asset: 'CZK' } });
    expect(evaluateMoney(r, csv({ amt: '1', cur: 'EUR' }), ctx)).toMatchObject({ kind: 'error', code: SCHEMA });
    const d = rule({ asset: { from: 'cur', map: { KC: 'CZK' }, map_default: 'EUR' } });
    expect(evaluateMoney(d, csv({ amt: '1', cur: 'other' }), ctx)).toMatchObject({ kind: 'value', value: { asset: 'EUR' } });
  });
  it('value part: trim and map', () => {
    const r = rule({ value: { from: 'amt', trim: true, map: { '-': '0' } } });
    expect(evaluateMoney(r, csv({ amt: ' - ', cur: 'EUR' }), ctx)).toEqual({ kind: 'value', value: { value: '0', asset: 'EUR', scale: 2 } });
  });
  it('units, separators and accounting negatives from the rule', () => {
    const r = rule({ decimal_separator: ',', group_separator: '.' });
    expect(evaluateMoney(r, csv({ amt: '(1.234,56)', cur: 'EUR' }), ctx)).toMatchObject({ kind: 'value', value: { value: '-123456' } });
    expect(evaluateMoney(rule({ units: 'minor' }), csv({ amt: '1250', cur: 'EUR' }), ctx)).toMatchObject({ kind: 'value', value: { value: '1250' } });
    expect(evaluateMoney(rule(), csv({ amt: '1.5', cur: 'JPY' }), ctx)).toMatchObject({ kind: 'error', code: MISMATCH });
  });

  it('no value: rejected, optional unset, default null unset, default amount, default Money object', () => {
    const row = csv({ amt: 'NULL', cur: 'EUR' });
    expect(evaluateMoney(rule(), row, ctx)).toEqual({ kind: 'error', code: SCHEMA, reason: 'no value' });
    expect(evaluateMoney(rule(), csv({ amt: '', cur: 'EUR' }), ctx)).toEqual({ kind: 'error', code: SCHEMA, reason: 'no value' });
    expect(evaluateMoney(rule({ optional: true }), row, ctx)).toEqual({ kind: 'unset' });
    expect(evaluateMoney(rule({ default: null }), row, ctx)).toEqual({ kind: 'unset' });
    expect(evaluateMoney(rule({ default: '0' }), row, ctx)).toEqual({ kind: 'value', value: { value: '0', asset: 'EUR', scale: 2 } });
    const literal = { value: '0', asset: 'EUR', scale: 2 };
    const r = evaluateMoney(rule({ default: literal }), csv({}), ctx);
    expect(r).toEqual({ kind: 'value', value: literal });
    expect(r.kind === 'value' && r.value).not.toBe(literal);
  });
  it('a present amount without an asset is rejected even when optional', () =>
    expect(evaluateMoney(rule({ optional: true }), csv({ amt: '1' }), ctx)).toEqual({ kind: 'error', code: SCHEMA, reason: 'no asset' }));

  describe('JSONL', () => {
    const jsonl = (value: unknown): SourceRow => ({ kind: 'jsonl', value });
    const r = rule({ value: { from: 'm.amount' }, asset: { from: 'm.currency' } });
    it('a string amount', () =>
      expect(evaluateMoney(r, jsonl({ m: { amount: '-0.5', currency: 'EUR' } }), ctx)).toMatchObject({ kind: 'value', value: { value: '-50' } }));
    it('a JSON integer amount', () =>
      expect(evaluateMoney(r, jsonl({ m: { amount: 12, currency: 'EUR' } }), ctx)).toMatchObject({ kind: 'value', value: { value: '1200' } }));
    it('a JSON number with a fraction is refused (it went through a float)', () =>
      expect(evaluateMoney(r, jsonl({ m: { amount: 12.5, currency: 'EUR' } }), ctx)).toMatchObject({ kind: 'error', code: SCHEMA }));
    it('an object amount is refused', () =>
      expect(evaluateMoney(r, jsonl({ m: { amount: { v: 1 }, currency: 'EUR' } }), ctx)).toMatchObject({ kind: 'error', code: SCHEMA }));
    it('JSON null is absent', () => expect(evaluateMoney(r, jsonl({ m: { amount: null, currency: 'EUR' } }), ctx)).toMatchObject({ reason: 'no value' }));
  });

  it('reasons never contain the source value', () => {
    for (const [amt, extra] of [
      ['4111111111111111.123', {}],
      ['4111111111111111x', {}],
      ['(4111111111111111', {}],
      ['4111111111111111.5', { units: 'minor' }],
      ['4111111111111111', { value: { from: 'amt', map: { a: 'b' } } }],
    ] as Array<[string, Partial<MoneyRule>]>) {
      const r = evaluateMoney(rule(extra), csv({ amt, cur: 'EUR' }), ctx);
      expect(r.kind).toBe('error');
      expect(JSON.stringify(r)).not.toContain('4111');
    }
    const r = evaluateMoney(rule(), csv({ amt: '1', cur: 'SECRETCUR' }), ctx);
    expect(r.kind).toBe('error');
    expect(JSON.stringify(r)).not.toContain('SECRETCUR');
  });
});
