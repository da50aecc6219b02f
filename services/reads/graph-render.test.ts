import { describe, expect, it } from 'vitest';
import { transferEdge } from '../../platform/graph/shared/edges.ts';
import type { Subgraph } from '../../platform/graph/port.ts';
import { renderSubgraph } from './graph-render.ts';

const USD = { asset: 'USD', scale: 2 };
const at = new Date('2026-10-05T10:00:00.000Z');
const pair = (totals: { count: number; sum: bigint | null; unpriced: number }) => {
  const subgraph: Subgraph = {
    nodes: [
      { kind: 'account', key: 'A4', attrs: null },
      { kind: 'account', key: 'A5', attrs: null },
    ],
    edges: [transferEdge('A4', 'A5', { ...totals, firstAt: at, lastAt: at })],
    truncated: false,
  };
  return renderSubgraph(subgraph, USD).edges[0]!;
};

describe('renderSubgraph: a transfer amount', () => {
  it('is the priced movements sum in base-asset minor units, the unpriced counted apart', () => {
    expect(pair({ count: 3, sum: 105n, unpriced: 1 })).toMatchObject({ count: 3, unpriced: 1, amount: { value: '105', asset: 'USD', scale: 2 } });
  });

  // Stores sum no priced movement as 0; shown, the console drew "1× 0.00 USD" for 1.23 GBP moved.
  it('is null when no movement of the pair could be priced, not a sum of 0', () => {
    expect(pair({ count: 1, sum: 0n, unpriced: 1 })).toMatchObject({ count: 1, unpriced: 1, amount: null });
  });

  it('is a real 0 when priced movements add up to nothing', () => {
    expect(pair({ count: 2, sum: 0n, unpriced: 0 })).toMatchObject({ amount: { value: '0', asset: 'USD', scale: 2 } });
  });
});
