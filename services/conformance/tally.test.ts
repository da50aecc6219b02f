import { describe, expect, it } from 'vitest';
import { ConformanceTally, itemPath, OTHER_PROBLEMS } from './tally.ts';

const at = new Date('2026-09-01T12:03:20Z');
const bucket = new Date('2026-09-01T12:00:00Z');
const schema = (path: string) => ({ path, code: 'svc:validation/schema' as const, message: 'x' });
const item = (object: unknown, errors: ReturnType<typeof schema>[] = [], prefix: string[] = []) => ({ value: { object, event: {} }, prefix, errors });

describe('conformance tally', () => {
  it('counts accepted items and refused ones by their first finding, per family and five minutes', () => {
    const tally = new ConformanceTally();
    tally.note('acme', at, [item('movement'), item('movement'), item('party', [schema('events.2.event.data.type'), schema('events.2.event.sequence')], ['events', '2'])]);
    tally.note('acme', new Date('2026-09-01T12:04:59.999Z'), [item('party', [schema('events.0.event.data.type')], ['events', '0'])]);
    tally.note('acme', new Date('2026-09-01T12:05:00Z'), [item('movement')]);
    expect(tally.take()).toEqual([
      { tenantId: 'acme', family: 'movement', bucket, code: '', path: '', items: 2 },
      { tenantId: 'acme', family: 'party', bucket, code: 'svc:validation/schema', path: 'event.data.type', items: 2 },
      { tenantId: 'acme', family: 'movement', bucket: new Date('2026-09-01T12:05:00Z'), code: '', path: '', items: 1 },
    ]);
    expect(tally.take()).toEqual([]);
  });

  it('leaves out an item whose object names no family', () => {
    const tally = new ConformanceTally();
    tally.note('acme', at, [item('payment', [schema('object')]), item(undefined, [schema('object')]), item('toString', [schema('object')])]);
    expect(tally.take()).toEqual([]);
  });

  it('makes paths relative to the item, with array indices as *, and bounds their length', () => {
    expect(itemPath('events.12.event.data.identifiers.3.value', ['events', '12'])).toBe('event.data.identifiers.*.value');
    expect(itemPath('event.data.fees.0.amount', [])).toBe('event.data.fees.*.amount');
    expect(itemPath(`event.data.${'x'.repeat(500)}`, []).length).toBe(200);
  });

  it('keeps no control character of a member name in a path (PostgreSQL text holds no NUL)', () => {
    expect(itemPath('events.0.event.data.a\u0000b\u001ft\u007f', ['events', '0'])).toBe('event.data.a\ufffdb\ufffdt\ufffd');
  });

  it("counts past fifty distinct problems of one family's bucket as one", () => {
    const tally = new ConformanceTally();
    tally.note('acme', at, Array.from({ length: 60 }, (_, i) => item('party', [schema(`event.data.unknown_${i}`)])));
    tally.note('acme', at, [item('party', [schema('event.data.unknown_3')])]);
    const rows = tally.take();
    expect(rows).toHaveLength(51);
    expect(rows.find((r) => r.path === 'event.data.unknown_3')?.items).toBe(2);
    expect(rows.find((r) => r.path === OTHER_PROBLEMS)?.items).toBe(10);
  });

  it('keeps counting past fifty as one across flushes of the same bucket, and anew in the next', () => {
    const tally = new ConformanceTally();
    const unknown = (from: number, n: number) => Array.from({ length: n }, (_, i) => item('party', [schema(`event.data.unknown_${from + i}`)]));
    tally.note('acme', at, unknown(0, 50));
    expect(tally.take()).toHaveLength(50);
    tally.note('acme', at, [...unknown(50, 10), ...unknown(0, 1)]);
    expect(tally.take()).toEqual([
      { tenantId: 'acme', family: 'party', bucket, code: 'svc:validation/schema', path: OTHER_PROBLEMS, items: 10 },
      { tenantId: 'acme', family: 'party', bucket, code: 'svc:validation/schema', path: 'event.data.unknown_0', items: 1 },
    ]);
    const next = new Date(bucket.getTime() + 5 * 60_000);
    tally.note('acme', next, unknown(100, 50));
    expect(tally.take().filter((r) => r.path === OTHER_PROBLEMS)).toEqual([]);
  });

  it('takes back counts a flush could not store, adding them to those counted since', () => {
    const tally = new ConformanceTally();
    tally.note('acme', at, [item('movement')]);
    const failed = tally.take();
    tally.note('acme', at, [item('movement')]);
    tally.restore(failed);
    expect(tally.take()).toEqual([{ tenantId: 'acme', family: 'movement', bucket, code: '', path: '', items: 2 }]);
  });
});
