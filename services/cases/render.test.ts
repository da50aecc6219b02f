import { describe, expect, it } from 'vitest';
import { publicEvidence } from './render.ts';

describe('publicEvidence', () => {
  it('shows the facts of evidence stored under camelCase names under snake_case ones, values untouched', () => {
    const stored = {
      movements: ['m-1'],
      facts: { listingTruncated: true, roundMajorUnits: 1000, previousActivityAt: '2026-01-10T10:00:00.000Z', newCounterpartyMovements: [{ movement: 'm-1', cash: false }] },
    };
    expect(publicEvidence(stored)).toEqual({
      movements: ['m-1'],
      facts: { listing_truncated: true, round_major_units: 1000, previous_activity_at: '2026-01-10T10:00:00.000Z', new_counterparty_movements: [{ movement: 'm-1', cash: false }] },
    });
  });

  it('leaves evidence without facts, or already snake_case, as it is', () => {
    expect(publicEvidence({ movements: [] })).toEqual({ movements: [] });
    expect(publicEvidence({ facts: { listing_truncated: false } })).toEqual({ facts: { listing_truncated: false } });
  });
});
