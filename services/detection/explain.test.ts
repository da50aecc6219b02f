import { describe, expect, it } from 'vitest';
import { explain } from './explain.ts';
import { velocitySpike } from './typologies/behaviour/velocity_spike.ts';
import type { Hit } from './framework/detector.ts';

describe('explain', () => {
  it('says a ratio over a mean of nothing is unbounded, never "Infinity"', () => {
    const hit = {
      outcome: 'hit',
      severity: 'medium',
      score: 0.6,
      summary: 'Incoming amount in 24h …',
      evidence: {
        movements: ['m-1'],
        counterparties: [],
        amounts: { total: '500000', count: 1, asset: 'USD' },
        window: { from: '2026-08-19T00:00:00.000Z', to: '2026-08-20T00:00:00.000Z' },
        thresholds: [{ name: 'in_sum_ratio_to_mean', threshold: 5, observed: Number.POSITIVE_INFINITY }],
      },
    } as unknown as Hit;
    const text = explain(velocitySpike, hit, null, 'USD');
    expect(text).toContain('in_sum_ratio_to_mean unbounded (none before) against 5');
    expect(text).not.toContain('Infinity');
  });
});
