import { describe, expect, it } from 'vitest';
import { memoKey } from './memo-key.ts';

describe('memoKey', () => {
  it('gives equal options the same key whatever their key order, and leaves undefined keys out', () => {
    expect(memoKey({ windows: ['24h'], thresholds: [{ threshold: 1000n, margin: 100n }] })).toBe(
      memoKey({ thresholds: [{ margin: 100n, threshold: 1000n }], windows: ['24h'], direction: undefined }),
    );
    expect(memoKey({ e: 5, d: 4, c: 3, b: 2, a: 1 })).toBe(memoKey({ a: 1, b: 2, c: 3, d: 4, e: 5 }));
    expect(memoKey({ c: 3, a: 1, e: 5, b: 2, d: 4 })).toBe(memoKey({ a: 1, b: 2, c: 3, d: 4, e: 5 }));
  });

  it('tells apart options that differ in a value, its type, nesting or order within a list', () => {
    const keys = [
      { limit: 5 },
      { limit: '5' },
      { limit: 5n },
      { limit: [5] },
      { limit: { n: 5 } },
      { limit: null },
      { limit: true },
      { limit: 'true' },
      { limit: 6 },
      { direction: 'in' },
      { direction: 'out' },
      { windows: ['24h', '7d'] },
      { windows: ['7d', '24h'] },
      { since: new Date('2026-01-01T00:00:00Z') },
      { since: '2026-01-01T00:00:00.000Z' },
      { since: new Date('2026-01-01T00:00:00.001Z') },
      {},
      { a: 'b,"c":1' },
      { a: 'b', c: 1 },
    ].map(memoKey);
    expect(new Set(keys).size).toBe(keys.length);
  });
});
