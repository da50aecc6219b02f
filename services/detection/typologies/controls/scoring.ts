// One score scale for every control detector, so a score and its severity never disagree:
// critical is kept for confirmed sanctions matches, high for strong patterns, medium for a
// pattern that just reaches its thresholds.
import type { Severity } from '../../framework/detector.ts';

const SEVERITY_FLOORS: ReadonlyArray<readonly [number, Severity]> = [
  [0.9, 'critical'],
  [0.7, 'high'],
  [0.4, 'medium'],
  [0, 'low'],
];

export function severityOf(score: number): Severity {
  return SEVERITY_FLOORS.find(([floor]) => score >= floor)![1];
}

// `base` when the observed value just reaches its threshold (ratio 1), plus `perDoubling` each
// time the ratio doubles, never above `cap`: ten times a threshold is stronger evidence than
// twice it, but not five times as strong.
export function scoreForRatio(ratio: number, base: number, perDoubling: number, cap: number): number {
  const growth = ratio > 1 ? Math.log2(ratio) * perDoubling : 0;
  return roundScore(Math.min(cap, base + growth));
}

export function roundScore(score: number): number {
  return Math.round(Math.min(1, Math.max(0, score)) * 100) / 100;
}

// observed / threshold for money, without going through floats for the division itself.
export function moneyRatio(observed: bigint, threshold: bigint): number {
  if (threshold <= 0n) return Number.POSITIVE_INFINITY;
  return Number((observed * 1000n) / threshold) / 1000;
}
