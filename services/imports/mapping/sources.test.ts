import { describe, expect, it } from 'vitest';
import { readSource } from './values.ts';
import { compileMapping } from './compile.ts';

const csv = (values: Record<string, string>, rowNo?: number) => ({ kind: 'csv' as const, get: (c: string) => values[c], ...(rowNo !== undefined ? { rowNo } : {}) });
const none = new Set<string>(['NULL']);

describe('joined sources and the row number (our extension of `from`)', () => {
  it('joins several columns with |, and gives nothing when any part is absent', () => {
    expect(readSource(csv({ bank: '10', account: '8000EBD30' }), ['bank', 'account'], none)).toBe('10|8000EBD30');
    expect(readSource(csv({ bank: '10' }), ['bank', 'account'], none)).toBeUndefined();
    expect(readSource(csv({ bank: '10', account: 'NULL' }), ['bank', 'account'], none)).toBeUndefined();
  });

  it('reads @row_no as the row number, alone or joined', () => {
    expect(readSource(csv({ id: 'x' }, 17), '@row_no', none)).toBe('17');
    expect(readSource(csv({ id: 'x' }, 17), ['id', '@row_no'], none)).toBe('x|17');
    expect(readSource({ kind: 'jsonl', value: { a: { b: [1, 2] } }, rowNo: 3 }, ['a.b.1', '@row_no'], none)).toBe('2|3');
  });

  it('checks each joined column against explicit columns, @row_no always allowed', () => {
    const mapping = (from: unknown) => ({
      mapping_version: 1,
      family: 'movement',
      format: { kind: 'csv', has_header: false, columns: ['id', 'at', 'bank'] },
      fields: { external_id: { from }, occurred_at: { from: 'at', type: 'datetime' } },
    });
    expect(compileMapping(mapping(['id', '@row_no'])).ok).toBe(true);
    const refused = compileMapping(mapping(['id', 'bnak']));
    expect(refused.ok ? [] : refused.errors.map((e) => [e.path, e.message])).toEqual([['fields.external_id.from.1', 'not one of format.columns; nearest: bank, at, id']]);
    expect(compileMapping(mapping(['id'])).ok).toBe(false);
  });
});
