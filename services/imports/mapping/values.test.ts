import { describe, expect, it } from 'vitest';
import {
  applyTreatments, convertValue, lookupJsonPath, readSource, readSourceText, sourceValue, toBoolean, toInteger, toJson, toNumber, toText,
  type SourceRow,
} from './values.ts';

const csv = (cells: Record<string, string>): SourceRow => ({ kind: 'csv', get: (column) => cells[column] });
const jsonl = (value: unknown): SourceRow => ({ kind: 'jsonl', value });
const NONE = new Set<string>();
const NULLS = new Set(['NULL', 'n/a']);

describe('lookupJsonPath', () => {
  const doc = { a: { b: [{ c: 1 }, { c: 2, d: [10, 20] }] }, '0': 'zero', n: null };
  it.each([
    ['a.b.0.c', 1],
    ['a.b.1.c', 2],
    ['a.b.1.d.1', 20],
    ['0', 'zero'],
    ['n', null],
  ])('finds %s', (path, expected) => expect(lookupJsonPath(doc, path)).toEqual(expected));
  it.each(['a.x', 'a.b.2.c', 'a.b.c', 'a.b.length', 'a.b.-1', 'a.b.0.c.d', 'constructor', 'a.toString', '__proto__', 'a.b.0.constructor'])(
    'finds nothing at %s', (path) => expect(lookupJsonPath(doc, path)).toBeUndefined());
  it('reads a member named __proto__ only when the JSON has one of its own', () =>
    expect(lookupJsonPath(JSON.parse('{"__proto__":{"x":1}}'), '__proto__.x')).toBe(1));
});

describe('readSource', () => {
  it('CSV: the column text; missing column and null_values are absent', () => {
    const row = csv({ a: 'x', b: 'NULL', c: '', d: 'null' });
    expect(readSource(row, 'a', NULLS)).toBe('x');
    expect(readSource(row, 'b', NULLS)).toBeUndefined();
    expect(readSource(row, 'zz', NULLS)).toBeUndefined();
    expect(readSource(row, 'c', NULLS)).toBe('');
    expect(readSource(row, 'd', NULLS)).toBe('null'); // exact match only
  });
  it('JSONL: values as parsed; null and null_values text are absent, other types are not', () => {
    const row = jsonl({ s: 'n/a', z: null, n: 5, t: true, o: { k: 'NULL' } });
    expect(readSource(row, 's', NULLS)).toBeUndefined();
    expect(readSource(row, 'z', NULLS)).toBeUndefined();
    expect(readSource(row, 'n', NULLS)).toBe(5);
    expect(readSource(row, 't', NULLS)).toBe(true);
    expect(readSource(row, 'o', NULLS)).toEqual({ k: 'NULL' });
    expect(readSource(row, 'o.k', NULLS)).toBeUndefined();
  });
  it('readSourceText gives JSON text for non-strings', () => {
    const row = jsonl({ n: 5, t: false, o: { k: 1 }, s: ' A ' });
    expect(readSourceText(row, 'n', NONE)).toBe('5');
    expect(readSourceText(row, 't', NONE)).toBe('false');
    expect(readSourceText(row, 'o', NONE)).toBe('{"k":1}');
    expect(readSourceText(row, 's', NONE)).toBe(' A ');
    expect(readSourceText(row, 'missing', NONE)).toBeUndefined();
  });
});

describe('applyTreatments', () => {
  it('trim, then case, then map (the map sees the trimmed, upper-cased value)', () =>
    expect(applyTreatments('  visa ', { trim: true, case: 'upper', map: { VISA: 'card', ' visa ': 'wrong' } })).toEqual({ ok: true, value: 'card' }));
  it('map keys are exact: without trim the spaces stay', () =>
    expect(applyTreatments(' VISA', { map: { VISA: 'card' }, map_default: 'other' })).toEqual({ ok: true, value: 'other' }));
  it('case lower', () => expect(applyTreatments('AbC', { case: 'lower' })).toEqual({ ok: true, value: 'abc' }));
  it('an unmapped value without map_default fails with schema, naming no value', () => {
    const r = applyTreatments('SECRET', { map: { A: 'a' } });
    expect(r).toMatchObject({ ok: false, code: 'svc:validation/schema' });
    expect(JSON.stringify(r)).not.toContain('SECRET');
  });
  it('map_default may be any literal', () => expect(applyTreatments('x', { map: { A: 'a' }, map_default: 7 })).toEqual({ ok: true, value: 7 }));
  it('a value mapped to null is absent', () => expect(applyTreatments('A', { map: { A: null } })).toEqual({ ok: true, value: undefined }));
  it('inherited members are not map keys', () =>
    expect(applyTreatments('constructor', { map: { A: 'a' } })).toMatchObject({ ok: false }));
  it('numbers and booleans are looked up by their text; trim and case leave them alone', () => {
    expect(applyTreatments(1, { trim: true, case: 'upper', map: { '1': 'one' } })).toEqual({ ok: true, value: 'one' });
    expect(applyTreatments(true, { map: { true: 'yes' } })).toEqual({ ok: true, value: 'yes' });
    expect(applyTreatments({ a: 1 }, { map: { a: 'x' }, map_default: 'd' })).toEqual({ ok: true, value: 'd' });
  });
  it('empty text that is not a map key stays empty (no value), neither map_default nor a rejection', () => {
    expect(applyTreatments('  ', { trim: true, map: { A: 'a' } })).toEqual({ ok: true, value: '' });
    expect(applyTreatments('', { map: { A: 'a' }, map_default: 'd' })).toEqual({ ok: true, value: '' });
    expect(applyTreatments('', { map: { '': 'blank' } })).toEqual({ ok: true, value: 'blank' });
  });
});

describe('sourceValue', () => {
  it('from a column, treated', () =>
    expect(sourceValue({ from: 'a', trim: true, case: 'upper' }, csv({ a: ' eur ' }), NONE)).toEqual({ ok: true, value: 'EUR' }));
  it('a constant, treated too', () => expect(sourceValue({ const: ' x ', trim: true }, csv({}), NONE)).toEqual({ ok: true, value: 'x' }));
  it('a constant object as is', () => expect(sourceValue({ const: { a: 1 } }, csv({}), NONE)).toEqual({ ok: true, value: { a: 1 } }));
  it.each([
    ['absent column', { from: 'zz' }],
    ['null constant', { const: null }],
    ['empty text', { from: 'e' }],
    ['blank text trimmed', { from: 'b', trim: true }],
    ['null value', { from: 'n' }],
    ['mapped to null', { from: 'a', map: { x: null } }],
  ])('no value: %s', (_, spec) =>
    expect(sourceValue(spec, csv({ e: '', b: '   ', n: 'NULL', a: 'x' }), NULLS)).toEqual({ ok: true, value: undefined }));

  it('refuses a JSONL number JSON.parse could not keep exactly, alone or in a joined source, rather than read another id', () => {
    // 9007199254740993 parses as 9007199254740992: two rows would share an external id.
    const row = jsonl(JSON.parse('{"id": 9007199254740993, "n": 2}'));
    for (const from of ['id', ['n', 'id']]) {
      expect(sourceValue({ from }, row, NONE)).toMatchObject({ ok: false, code: 'svc:validation/schema', reason: expect.stringContaining('write it as a string') });
    }
    expect(sourceValue({ from: 'n' }, jsonl({ n: 9007199254740991 }), NONE)).toEqual({ ok: true, value: 9007199254740991 });
    expect(sourceValue({ from: ['n', 'm'] }, jsonl({ n: 12.5, m: 3 }), NONE)).toEqual({ ok: true, value: expect.stringMatching(/^12\.5.3$/) });
  });
});

describe('conversions', () => {
  it.each([['0', 0], ['42', 42], ['-7', -7], ['+7', 7], ['007', 7], ['-0', 0], ['9007199254740991', 9007199254740991], [12, 12]])(
    'integer %j', (input, expected) => expect(toInteger(input)).toEqual({ ok: true, value: expected }));
  it.each(['1.0', '1e3', ' 1', '1 ', '', '0x10', '9007199254740992', '-9007199254740992', '1_000', 'one', 1.5, true, null, {}])(
    'not an integer: %j', (input) => expect(toInteger(input)).toMatchObject({ ok: false, code: 'svc:validation/schema' }));

  it.each([['1.5', 1.5], ['-0.25', -0.25], ['+3', 3], ['.5', 0.5], ['5.', 5], ['1e3', 1000], ['1.5E-2', 0.015], [2.5, 2.5]])(
    'number %j', (input, expected) => expect(toNumber(input)).toEqual({ ok: true, value: expected }));
  it.each(['0x10', '0b1', 'Infinity', 'NaN', '1e400', '', ' 1', '1,5', '1_0', '.', 'e5', Number.NaN, Number.POSITIVE_INFINITY, true, '[1]'])(
    'not a number: %j', (input) => expect(toNumber(input)).toMatchObject({ ok: false, code: 'svc:validation/schema' }));

  it.each([['true', true], ['T', true], ['Yes', true], ['y', true], ['1', true], ['FALSE', false], ['f', false], ['no', false], ['N', false], ['0', false], [true, true], [false, false], [1, true], [0, false]])(
    'boolean %j (defaults)', (input, expected) => expect(toBoolean(input, {})).toEqual({ ok: true, value: expected }));
  it.each(['', 'maybe', '2', ' yes', 'tru'])('not a boolean: %j', (input) =>
    expect(toBoolean(input, {})).toMatchObject({ ok: false, code: 'svc:validation/schema' }));
  it('true_values and false_values replace the defaults, case-insensitively', () => {
    const rule = { true_values: ['Ano'], false_values: ['NE'] };
    expect(toBoolean('ANO', rule)).toEqual({ ok: true, value: true });
    expect(toBoolean('ne', rule)).toEqual({ ok: true, value: false });
    expect(toBoolean('yes', rule)).toMatchObject({ ok: false });
  });

  it('string: text as is, numbers and booleans as their text, not objects', () => {
    expect(toText(' a ')).toEqual({ ok: true, value: ' a ' });
    expect(toText(12.5)).toEqual({ ok: true, value: '12.5' });
    expect(toText(false)).toEqual({ ok: true, value: 'false' });
    expect(toText({ a: 1 })).toMatchObject({ ok: false, code: 'svc:validation/schema' });
    expect(toText([1])).toMatchObject({ ok: false, code: 'svc:validation/schema' });
  });

  it('json: text is parsed, anything else is taken as is', () => {
    expect(toJson('{"a":[1,2]}')).toEqual({ ok: true, value: { a: [1, 2] } });
    expect(toJson('"x"')).toEqual({ ok: true, value: 'x' });
    expect(toJson({ a: 1 })).toEqual({ ok: true, value: { a: 1 } });
    expect(toJson(3)).toEqual({ ok: true, value: 3 });
    expect(toJson('{bad')).toMatchObject({ ok: false, code: 'svc:validation/schema', reason: 'not valid JSON' });
  });

  it('convertValue dispatches by type, datetime included', () => {
    expect(convertValue('5', 'string', {})).toEqual({ ok: true, value: '5' });
    expect(convertValue('5', 'integer', {})).toEqual({ ok: true, value: 5 });
    expect(convertValue('5.5', 'number', {})).toEqual({ ok: true, value: 5.5 });
    expect(convertValue('y', 'boolean', {})).toEqual({ ok: true, value: true });
    expect(convertValue('[1]', 'json', {})).toEqual({ ok: true, value: [1] });
    expect(convertValue('2019-09-01T12:00:00+02:00', 'datetime', {})).toEqual({ ok: true, value: '2019-09-01T12:00:00+02:00' });
    expect(convertValue('2019-09-01 12:00:00+02:00', 'datetime', {})).toEqual({ ok: true, value: '2019-09-01T10:00:00.000Z' });
    expect(convertValue('nope', 'datetime', {})).toMatchObject({ ok: false, code: 'svc:validation/timestamp_out_of_range' });
  });
});
