import { describe, expect, it } from 'vitest';
import { SCHEMA_VERSION } from '../../../schemas/envelope.ts';
import type { FieldRule, RowFilter } from '../../../schemas/imports/mapping.ts';
import { assembleRow, evaluateTarget, rowMatchesFilter, type AssemblyContext, type AssemblyTarget, type SourceRow } from './assemble.ts';

const SCHEMA = 'svc:validation/schema';
const TS = 'svc:validation/timestamp_out_of_range';
const MISMATCH = 'svc:validation/money_scale_mismatch';

const csv = (cells: Record<string, string>): SourceRow => ({ kind: 'csv', get: (column) => cells[column] });
const jsonl = (value: unknown): SourceRow => ({ kind: 'jsonl', value });
const registry = new Map([['EUR', 2], ['CZK', 2], ['JPY', 0]]);
const ctx: AssemblyContext = { nullValues: new Set(['', 'NULL']), scaleOf: (asset) => registry.get(asset) };

// What the compiler hands over: type defaulted to string, the path split.
const t = (target: string, rule: FieldRule): AssemblyTarget => ({
  target,
  path: target.split('.'),
  rule,
  type: (rule.type ?? 'string'),
});
const base = [t('external_id', { from: 'id' }), t('occurred_at', { from: 'when', type: 'datetime' })];
const row = (cells: Record<string, string>) => csv({ id: 'e-1', when: '2019-09-01T12:00:00Z', ...cells });

describe('assembleRow: the event', () => {
  it('builds the envelope: schema_version filled in, data always present, members in order', () => {
    const out = assembleRow({ targets: [t('occurred_at', { from: 'when', type: 'datetime' }), t('external_id', { from: 'id' })] }, row({}), ctx);
    expect(out).toEqual({
      kind: 'event',
      externalId: 'e-1',
      event: { external_id: 'e-1', schema_version: SCHEMA_VERSION, occurred_at: '2019-09-01T12:00:00Z', data: {} },
    });
    if (out.kind === 'event') expect(Object.keys(out.event)).toEqual(['external_id', 'schema_version', 'occurred_at', 'data']);
  });

  it('a mapped schema_version is kept as given (validation judges it)', () => {
    const out = assembleRow({ targets: [...base, t('schema_version', { const: '2020-01-01' })] }, row({}), ctx);
    expect(out).toMatchObject({ kind: 'event', event: { schema_version: '2020-01-01' } });
  });

  it('every type, nested data paths, recorded_at and sequence', () => {
    const targets = [
      ...base,
      t('recorded_at', { from: 'rec', type: 'datetime', format: 'epoch_ms' }),
      t('sequence', { from: 'seq', type: 'integer' }),
      t('data.name', { from: 'name', trim: true }),
      t('data.score', { from: 'score', type: 'number' }),
      t('data.active', { from: 'active', type: 'boolean' }),
      t('data.extra', { from: 'extra', type: 'json' }),
      t('data.opened_on', { from: 'opened', type: 'datetime', pattern: 'YYMMDD', tz: 'Europe/Prague' }),
      t('data.amount', { type: 'money', value: { from: 'amt' }, asset: { const: 'CZK' } }),
      t('data.debit.account_id', { from: 'acct' }),
    ];
    const out = assembleRow(
      { targets },
      row({ rec: '1567339200123', seq: '3', name: ' Ann ', score: '0.75', active: 'Y', extra: '{"k":[1]}', opened: '930101', amt: '700.00', acct: '576' }),
      ctx,
    );
    expect(out).toEqual({
      kind: 'event',
      externalId: 'e-1',
      event: {
        external_id: 'e-1',
        schema_version: SCHEMA_VERSION,
        occurred_at: '2019-09-01T12:00:00Z',
        recorded_at: '2019-09-01T12:00:00.123Z',
        sequence: 3,
        data: {
          name: 'Ann',
          score: 0.75,
          active: true,
          extra: { k: [1] },
          opened_on: '1992-12-31T23:00:00.000Z',
          amount: { value: '70000', asset: 'CZK', scale: 2 },
          debit: { account_id: '576' },
        },
      },
    });
  });

  it('JSONL: dotted from paths with array indexes; typed values as they are', () => {
    const targets = [
      t('external_id', { from: 'tx.ids.0' }),
      t('occurred_at', { from: 'tx.time', type: 'datetime', format: 'epoch_s' }),
      t('sequence', { from: 'tx.version', type: 'integer' }),
      t('data.flag', { from: 'tx.flags.1.on', type: 'boolean' }),
      t('data.label', { from: 'tx.n' }),
      t('data.meta', { from: 'tx.meta', type: 'json' }),
      t('data.amount', { type: 'money', value: { from: 'tx.legs.1.amount' }, asset: { from: 'tx.legs.1.ccy', case: 'upper' } }),
    ];
    const line = {
      tx: {
        ids: ['j-1', 'j-2'],
        time: 1567339200,
        version: 2,
        flags: [{ on: false }, { on: true }],
        n: 42,
        meta: { a: [1, { b: null }] },
        legs: [{ amount: '1', ccy: 'eur' }, { amount: '(2.50)', ccy: 'eur' }],
      },
    };
    expect(assembleRow({ targets }, jsonl(line), ctx)).toEqual({
      kind: 'event',
      externalId: 'j-1',
      event: {
        external_id: 'j-1',
        schema_version: SCHEMA_VERSION,
        occurred_at: '2019-09-01T12:00:00.000Z',
        sequence: 2,
        data: { flag: true, label: '42', meta: { a: [1, { b: null }] }, amount: { value: '-250', asset: 'EUR', scale: 2 } },
      },
    });
  });

  it('numeric target segments under collections create arrays; items whose targets are all unset leave no hole', () => {
    const targets = [
      ...base,
      t('data.identifiers.0.kind', { from: 'k0', optional: true }),
      t('data.identifiers.0.value', { from: 'v0', optional: true }),
      t('data.identifiers.1.kind', { const: 'tax_id' }),
      t('data.identifiers.1.value', { from: 'v1' }),
      t('data.fees.0', { type: 'money', value: { from: 'fee' }, asset: { const: 'EUR' } }),
    ];
    const full = assembleRow({ targets }, row({ k0: 'passport', v0: 'P1', v1: 'T1', fee: '1' }), ctx);
    expect(full).toMatchObject({
      kind: 'event',
      event: {
        data: {
          identifiers: [{ kind: 'passport', value: 'P1' }, { kind: 'tax_id', value: 'T1' }],
          fees: [{ value: '100', asset: 'EUR', scale: 2 }],
        },
      },
    });
    const partial = assembleRow({ targets }, row({ v1: 'T1', fee: '1' }), ctx);
    expect(partial.kind === 'event' && partial.event.data).toEqual({
      identifiers: [{ kind: 'tax_id', value: 'T1' }],
      fees: [{ value: '100', asset: 'EUR', scale: 2 }],
    });
    if (partial.kind === 'event') expect(Array.isArray((partial.event.data as Record<string, unknown>).identifiers)).toBe(true);
  });

  it('a constant object is copied into each event, never shared', () => {
    const targets = [...base, t('data.meta', { const: { tags: ['a'] }, type: 'json' }), t('data.meta.source', { const: 'file' })];
    const first = assembleRow({ targets }, row({}), ctx);
    const second = assembleRow({ targets }, row({}), ctx);
    expect(first).toMatchObject({ event: { data: { meta: { tags: ['a'], source: 'file' } } } });
    if (first.kind !== 'event' || second.kind !== 'event') throw new Error('expected events');
    expect(first.event.data).not.toBe(second.event.data);
    expect((first.event.data as { meta: unknown }).meta).not.toBe((second.event.data as { meta: unknown }).meta);
    expect(targets[2]!.rule.const).toEqual({ tags: ['a'] });
  });
});

describe('rule keys through assembleRow', () => {
  const one = (rule: FieldRule, cells: Record<string, string>) => {
    const out = assembleRow({ targets: [...base, t('data.x', rule)] }, row(cells), ctx);
    return out.kind === 'event' ? { set: Object.hasOwn(out.event.data as object, 'x'), x: (out.event.data as Record<string, unknown>).x } : out;
  };

  it('trim, then case, then map', () =>
    expect(one({ from: 'c', trim: true, case: 'lower', map: { visa: 'card', ' VISA ': 'no' } }, { c: ' VISA ' })).toEqual({ set: true, x: 'card' }));
  it('map to a typed literal, converted by type', () =>
    expect(one({ from: 'c', type: 'integer', map: { A: 1, B: '2' } }, { c: 'B' })).toEqual({ set: true, x: 2 }));
  it('map_default', () => expect(one({ from: 'c', map: { A: 'a' }, map_default: 'other' }, { c: 'Z' })).toEqual({ set: true, x: 'other' }));
  it('unmapped without map_default rejects with schema', () =>
    expect(one({ from: 'c', map: { A: 'a' } }, { c: 'Z' })).toMatchObject({ kind: 'rejected', code: SCHEMA, path: 'data.x' }));
  it('const', () => expect(one({ const: 7, type: 'integer' }, {})).toEqual({ set: true, x: 7 }));
  it('default for an absent, null-valued or empty source', () => {
    expect(one({ from: 'c', default: 'd' }, {})).toEqual({ set: true, x: 'd' });
    expect(one({ from: 'c', default: 'd' }, { c: 'NULL' })).toEqual({ set: true, x: 'd' });
    expect(one({ from: 'c', default: 'd', trim: true }, { c: '  ' })).toEqual({ set: true, x: 'd' });
    expect(one({ from: 'c', default: '5', type: 'integer' }, {})).toEqual({ set: true, x: 5 });
  });
  it('default null leaves the target unset', () => expect(one({ from: 'c', default: null }, {})).toEqual({ set: false, x: undefined }));
  it('optional leaves the target unset', () => expect(one({ from: 'c', optional: true }, { c: '' })).toEqual({ set: false, x: undefined }));
  it('no value and not optional rejects, naming the target', () =>
    expect(one({ from: 'c' }, {})).toMatchObject({ kind: 'rejected', code: SCHEMA, path: 'data.x', message: 'no value for data.x', externalId: 'e-1' }));
  it.each([
    [{ from: 'c', type: 'integer' }, '1.5', SCHEMA],
    [{ from: 'c', type: 'number' }, '0x1F', SCHEMA],
    [{ from: 'c', type: 'boolean' }, 'maybe', SCHEMA],
    [{ from: 'c', type: 'boolean', true_values: ['ja'], false_values: ['nein'] }, 'yes', SCHEMA],
    [{ from: 'c', type: 'json' }, '{oops', SCHEMA],
    [{ from: 'c', type: 'datetime' }, '2019-02-30T00:00:00Z', SCHEMA],
    [{ from: 'c', type: 'datetime', format: 'epoch_s' }, '12.34.56', SCHEMA],
    [{ from: 'c', type: 'datetime', format: 'epoch_ms' }, '1.5', SCHEMA],
    [{ from: 'c', type: 'datetime', pattern: 'DD.MM.YYYY HH:mm', tz: 'Europe/Prague' }, '31.12.2019', SCHEMA],
  ] as Array<[FieldRule, string, string]>)('%j rejects with its code', (rule, value, code) =>
    expect(one(rule, { c: value })).toMatchObject({ kind: 'rejected', code, path: 'data.x' }));
  it('boolean with true_values/false_values', () =>
    expect(one({ from: 'c', type: 'boolean', true_values: ['ja'], false_values: ['nein'] }, { c: 'NEIN' })).toEqual({ set: true, x: false }));
  it('money: too many fraction digits and an unknown asset without scale are money_scale_mismatch', () => {
    const money = (asset: string): FieldRule => ({ type: 'money', value: { from: 'c' }, asset: { const: asset } });
    expect(one(money('EUR'), { c: '1.005' })).toMatchObject({ kind: 'rejected', code: MISMATCH, path: 'data.x' });
    expect(one(money('XAU'), { c: '1' })).toMatchObject({ kind: 'rejected', code: MISMATCH, path: 'data.x' });
    expect(one({ ...money('XAU'), scale: 3 }, { c: '1' })).toEqual({ set: true, x: { value: '1000', asset: 'XAU', scale: 3 } });
    expect(one({ ...money('EUR'), units: 'minor' }, { c: '+125' })).toEqual({ set: true, x: { value: '125', asset: 'EUR', scale: 2 } });
  });
});

describe('rejections', () => {
  it('the first failing target rejects the row, with the external_id already produced', () => {
    const targets = [
      t('occurred_at', { from: 'when', type: 'datetime' }),
      t('data.a', { from: 'a', type: 'integer' }),
      t('data.b', { from: 'b', type: 'boolean' }),
      t('external_id', { from: 'id' }), // listed last, still produced first
    ];
    expect(assembleRow({ targets }, row({ a: 'x', b: 'x' }), ctx)).toEqual({
      kind: 'rejected',
      code: SCHEMA,
      path: 'data.a',
      message: 'data.a: not an integer',
      externalId: 'e-1',
    });
  });
  it('an unparseable occurred_at is timestamp_out_of_range', () =>
    expect(assembleRow({ targets: [t('external_id', { from: 'id' }), t('occurred_at', { from: 'when', type: 'datetime' })] }, row({ when: 'soon' }), ctx))
      .toMatchObject({ kind: 'rejected', code: TS, path: 'occurred_at', externalId: 'e-1' }));
  it.each(['recorded_at', 'data.created_at'])('an unparseable %s is schema, as live ingest answers it', (target) =>
    expect(assembleRow({ targets: [t('external_id', { from: 'id' }), t(target, { from: 'when', type: 'datetime' })] }, row({ when: 'soon' }), ctx))
      .toMatchObject({ kind: 'rejected', code: SCHEMA, path: target, externalId: 'e-1' }));
  it('no external_id in the rejection when it failed itself', () => {
    const out = assembleRow({ targets: base }, csv({ when: 'x' }), ctx);
    expect(out).toEqual({ kind: 'rejected', code: SCHEMA, path: 'external_id', message: 'no value for external_id' });
  });
  it('a non-string external_id is not reported as one', () => {
    const out = assembleRow({ targets: [t('external_id', { from: 'id', type: 'integer' }), t('data.x', { from: 'x' })] }, csv({ id: '5' }), ctx);
    expect(out).toMatchObject({ kind: 'rejected', path: 'data.x' });
    expect(out).not.toHaveProperty('externalId');
  });

  it('messages never contain the source value', () => {
    const secret = '4111111111111111';
    const rules: FieldRule[] = [
      { from: 's', type: 'integer' },
      { from: 's', type: 'integer', trim: true, case: 'upper' },
      { from: 's', type: 'number', map: { a: 'b' } },
      { from: 's', type: 'boolean' },
      { from: 's', type: 'json' },
      { from: 's', type: 'datetime' },
      { from: 's', type: 'datetime', format: 'epoch_s' },
      { from: 's', type: 'datetime', format: 'epoch_ms' },
      { from: 's', type: 'datetime', pattern: 'YYYYMMDD' },
      { type: 'money', value: { from: 's' }, asset: { const: 'EUR' } },
      { type: 'money', value: { from: 's' }, asset: { const: 'EUR' }, units: 'minor', decimal_separator: ',' },
      { type: 'money', value: { from: 'm' }, asset: { from: 's' } },
      { type: 'money', value: { from: 'm' }, asset: { from: 's', map: { EUR: 'EUR' } } },
    ];
    for (const rule of rules) {
      const values = rule.type === 'json' ? [`{"pan":${secret}`] : [`${secret}x`, `${secret}.12345`, `(${secret},5)`];
      for (const value of values) {
        const out = assembleRow({ targets: [...base, t('data.card', rule)] }, row({ s: value, m: '1' }), ctx);
        expect(out.kind, `${JSON.stringify(rule)} ${value}`).toBe('rejected');
        expect(JSON.stringify(out)).not.toContain('4111');
      }
    }
  });
});

describe('target paths', () => {
  it.each(['data.__proto__.polluted', 'data.constructor.prototype.polluted', 'data.x.prototype', '__proto__', 'data.identifiers.0.__proto__'])(
    'refuses the segment in %s', (target) => {
      const out = assembleRow({ targets: [...base, t(target, { const: 'yes' })] }, row({}), ctx);
      expect(out).toMatchObject({ kind: 'rejected', code: SCHEMA, path: target, externalId: 'e-1' });
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      expect((Object.prototype as Record<string, unknown>).polluted).toBeUndefined();
    });
  it('refuses an index above the limit', () =>
    expect(assembleRow({ targets: [...base, t('data.identifiers.1000.value', { const: 'x' })] }, row({}), ctx)).toMatchObject({ kind: 'rejected', code: SCHEMA }));
  it('refuses a path through a value another target set', () =>
    expect(assembleRow({ targets: [...base, t('data.a', { const: 'x' }), t('data.a.b', { const: 'y' })] }, row({}), ctx))
      .toMatchObject({ kind: 'rejected', code: SCHEMA, path: 'data.a.b' }));
  it('refuses a named member under an array', () =>
    expect(assembleRow({ targets: [...base, t('data.list.0', { const: 'x' }), t('data.list.name', { const: 'y' })] }, row({}), ctx))
      .toMatchObject({ kind: 'rejected', code: SCHEMA, path: 'data.list.name' }));
});

describe('row_filter', () => {
  const filter = (op: RowFilter['op'], values: string[]): RowFilter => ({ from: 'type', op, values });
  const matches = (f: RowFilter, r: SourceRow) => rowMatchesFilter(f, r, ctx.nullValues);

  it.each([
    ['in', ['A', 'B'], 'B', true],
    ['in', ['A', 'B'], 'C', false],
    ['not_in', ['A', 'B'], 'C', true],
    ['not_in', ['A', 'B'], 'A', false],
    ['eq', ['A'], 'A', true],
    ['eq', ['A'], 'a', false],
    ['ne', ['A'], 'a', true],
    ['ne', ['A'], 'A', false],
    ['eq', ['A'], ' A', false], // the raw value, no treatments
  ] as Array<[RowFilter['op'], string[], string, boolean]>)('%s %j on %j: %s', (op, values, value, expected) =>
    expect(matches(filter(op, values), csv({ type: value }))).toBe(expected));

  it.each([
    ['missing column', csv({})],
    ['null value', csv({ type: 'NULL' })],
    ['JSON null', jsonl({ type: null })],
    ['JSONL missing path', jsonl({})],
  ])('absent (%s): never in/eq, always not_in/ne', (_, r) => {
    expect(matches(filter('in', ['NULL', '']), r)).toBe(false);
    expect(matches(filter('eq', ['NULL']), r)).toBe(false);
    expect(matches(filter('not_in', ['A']), r)).toBe(true);
    expect(matches(filter('ne', ['A']), r)).toBe(true);
  });

  it('JSONL values as text, paths with indexes', () => {
    expect(rowMatchesFilter({ from: 'a.0.kind', op: 'eq', values: ['7'] }, jsonl({ a: [{ kind: 7 }] }), ctx.nullValues)).toBe(true);
    expect(rowMatchesFilter({ from: 'a.1', op: 'in', values: ['true'] }, jsonl({ a: [0, true] }), ctx.nullValues)).toBe(true);
  });

  it('a non-matching row is skipped, not rejected, even when it would fail', () => {
    const input = { targets: [...base, t('data.n', { from: 'n', type: 'integer' })], rowFilter: filter('in', ['PRIJEM']) };
    expect(assembleRow(input, row({ type: 'VYDAJ', n: 'bad' }), ctx)).toEqual({ kind: 'skipped' });
    expect(assembleRow(input, row({ type: 'PRIJEM', n: 'bad' }), ctx)).toMatchObject({ kind: 'rejected' });
    expect(assembleRow(input, row({ type: 'PRIJEM', n: '1' }), ctx)).toMatchObject({ kind: 'event', event: { data: { n: 1 } } });
  });
});

it('evaluateTarget: one target on its own', () => {
  expect(evaluateTarget(t('data.x', { from: 'c', type: 'integer' }), csv({ c: '5' }), ctx)).toEqual({ kind: 'value', value: 5 });
  expect(evaluateTarget(t('data.x', { from: 'c', optional: true }), csv({}), ctx)).toEqual({ kind: 'unset' });
});
