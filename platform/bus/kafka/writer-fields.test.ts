import avro, { type Schema } from 'avsc';

// Schemas as JSON (avsc's Schema type has no place for a union written as an array).
const typeOf = (schema: unknown) => avro.Type.forSchema(schema as Schema);
type FieldSchema = Record<string, unknown>;
import { describe, expect, it } from 'vitest';
import { fieldsReaderWouldDrop } from './writer-fields.ts';

const leg = (extra: FieldSchema[] = []) => ({ type: 'record', name: 'Leg', fields: [{ name: 'account_id', type: ['null', 'string'], default: null }, ...extra] });
const event = (extra: { top?: FieldSchema[]; leg?: FieldSchema[] } = {}) =>
  typeOf({
    type: 'record',
    name: 'Movement',
    fields: [
      { name: 'external_id', type: 'string' },
      { name: 'debit', type: ['null', leg(extra.leg)], default: null },
      { name: 'fees', type: { type: 'array', items: { type: 'record', name: 'Fee', fields: [{ name: 'value', type: 'string' }] } } },
      ...(extra.top ?? []),
    ],
  });

describe('fieldsReaderWouldDrop', () => {
  it('names each field of the writer the reader has no place for, at any depth', () => {
    const newer = event({ top: [{ name: 'memo', type: ['null', 'string'], default: null }], leg: [{ name: 'iban', type: ['null', 'string'], default: null }] });
    expect(fieldsReaderWouldDrop(newer, event())).toEqual(['debit.iban', 'memo']);
  });

  it('names nothing when the reader holds every field the writer has (the same, or a newer reader)', () => {
    const newer = event({ top: [{ name: 'memo', type: ['null', 'string'], default: null }] });
    expect(fieldsReaderWouldDrop(event(), event())).toEqual([]);
    expect(fieldsReaderWouldDrop(event(), newer)).toEqual([]);
  });

  it('follows arrays and maps, and takes a reader alias as the field', () => {
    const withFeeCurrency = typeOf({ type: 'array', items: { type: 'record', name: 'Fee', fields: [{ name: 'value', type: 'string' }, { name: 'asset', type: 'string' }] } });
    const fees = typeOf({ type: 'array', items: { type: 'record', name: 'Fee', fields: [{ name: 'value', type: 'string' }] } });
    expect(fieldsReaderWouldDrop(withFeeCurrency, fees, 'fees')).toEqual(['fees[].asset']);
    const aliased = typeOf({ type: 'map', values: { type: 'record', name: 'R', fields: [{ name: 'amount', aliases: ['value'], type: 'string' }] } });
    const old = typeOf({ type: 'map', values: { type: 'record', name: 'R', fields: [{ name: 'value', type: 'string' }] } });
    expect(fieldsReaderWouldDrop(old, aliased)).toEqual([]);
  });
});
