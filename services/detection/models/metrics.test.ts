import { describe, expect, it } from 'vitest';
import { atThreshold, averagePrecision, bestF1Threshold } from './metrics.ts';
import { stratifiedSplit } from './split.ts';

// Scores worked out by hand: ranked 0.9 (+), 0.8 (-), 0.7 (+), 0.6 (-), 0.5 (+).
const ranked = [
  { score: 0.9, label: true },
  { score: 0.8, label: false },
  { score: 0.7, label: true },
  { score: 0.6, label: false },
  { score: 0.5, label: true },
];

describe('metrics', () => {
  it('counts precision, recall and F1 at a threshold', () => {
    // Flagged at >= 0.7: 0.9 (+), 0.8 (-), 0.7 (+): precision 2/3, recall 2/3.
    const m = atThreshold(ranked, 0.7);
    expect(m.precision).toBeCloseTo(2 / 3);
    expect(m.recall).toBeCloseTo(2 / 3);
    expect(m.f1).toBeCloseTo(2 / 3);
    expect(atThreshold(ranked, 0.95)).toEqual({ precision: 0, recall: 0, f1: 0 });
  });

  it('takes the average precision at each positive', () => {
    // Precision at the positives: 1/1, 2/3, 3/5.
    expect(averagePrecision(ranked)).toBeCloseTo((1 + 2 / 3 + 3 / 5) / 3);
    // Tied scores are one step: both at 0.5, one positive: precision 1/2 there.
    expect(averagePrecision([{ score: 0.5, label: true }, { score: 0.5, label: false }])).toBeCloseTo(0.5);
  });

  it('picks the threshold with the best F1', () => {
    // F1 per cut: 0.9 → 0.5, 0.8 → 0.4, 0.7 → 0.667, 0.6 → 0.571, 0.5 → 0.75 (nothing left out).
    expect(bestF1Threshold(ranked)).toBe(0.5);
    expect(bestF1Threshold([{ score: 0.3, label: false }])).toBe(0.5);
  });

  it('puts the threshold halfway, in log-odds, between the lowest score flagged and the highest left out', () => {
    // Separable: the best cut flags 0.9999 and above and leaves 0.2 out; the middle of the gap is
    // sigmoid((logit(0.9999) + logit(0.2)) / 2), about 0.980, where the lowest positive was kept.
    const separable = [
      { score: 0.99999, label: true },
      { score: 0.9999, label: true },
      { score: 0.2, label: false },
      { score: 0.1, label: false },
    ];
    const threshold = bestF1Threshold(separable);
    expect(threshold).toBeCloseTo(1 / (1 + Math.exp(-(Math.log(0.9999 / 0.0001) + Math.log(0.2 / 0.8)) / 2)), 12);
    expect(threshold).toBeGreaterThan(0.97);
    expect(threshold).toBeLessThan(0.99);
    expect(atThreshold(separable, threshold)).toEqual({ precision: 1, recall: 1, f1: 1 });
    // A saturated score: halfway in probability.
    expect(bestF1Threshold([{ score: 1, label: true }, { score: 0, label: false }])).toBe(0.5);
  });
});

describe('stratified split', () => {
  it('holds back the same share of each class, the same way every time', () => {
    const labels = [...Array(20).fill(true), ...Array(80).fill(false)] as boolean[];
    const { train, heldOut } = stratifiedSplit(labels, 0.25, 7);
    expect(heldOut.filter((i) => labels[i]).length).toBe(5);
    expect(heldOut.filter((i) => !labels[i]).length).toBe(20);
    expect(new Set([...train, ...heldOut]).size).toBe(100);
    expect(stratifiedSplit(labels, 0.25, 7)).toEqual({ train, heldOut });
    expect(stratifiedSplit(labels, 0.25, 8).heldOut).not.toEqual(heldOut);
  });

  it('keeps one example of a class on each side when it has two', () => {
    const { train, heldOut } = stratifiedSplit([true, true, false, false, false], 0.1, 1);
    expect(heldOut.filter((i) => i < 2)).toHaveLength(1);
    expect(train.filter((i) => i < 2)).toHaveLength(1);
  });
});
