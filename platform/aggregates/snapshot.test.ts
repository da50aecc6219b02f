import { describe, expect, it } from 'vitest';
import { DistinctCounterparties } from './snapshot.ts';

function count(counter: DistinctCounterparties, seen: Array<[string, 'in' | 'out']>): { in: number; out: number; total: number } {
  counter.start();
  for (const [counterparty, direction] of seen) counter.add(counterparty, direction);
  return { in: counter.in, out: counter.out, total: counter.total };
}

describe('the distinct counterparties of a window count', () => {
  it('counts each counterparty once per direction and once in all, and starts afresh per count', () => {
    const counter = new DistinctCounterparties();
    const first: Array<[string, 'in' | 'out']> = [['a', 'in'], ['a', 'in'], ['a', 'out'], ['b', 'out'], ['c', 'in'], ['b', 'out']];
    expect(count(counter, first)).toEqual({ in: 2, out: 2, total: 3 });
    // What the first count saw does not carry over.
    expect(count(counter, [['b', 'in'], ['d', 'out']])).toEqual({ in: 1, out: 1, total: 2 });
    expect(count(counter, [])).toEqual({ in: 0, out: 0, total: 0 });
  });

  it('gives the same counts across the resets that bound its memory and its stamps', () => {
    const seen: Array<[string, 'in' | 'out']> = [['a', 'in'], ['b', 'out'], ['a', 'out'], ['c', 'in'], ['c', 'in']];
    const expected = { in: 2, out: 2, total: 3 };
    // Reset when three counterparties are kept, and every second generation.
    for (const counter of [new DistinctCounterparties(1 << 28, 3), new DistinctCounterparties(2, 100)]) {
      for (let round = 0; round < 5; round++) expect(count(counter, seen)).toEqual(expected);
    }
  });
});
