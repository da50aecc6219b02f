// One scale for every network detector, so a score and its severity always agree:
//   < 0.40 low (a weak, single-signal hit), < 0.65 medium (thresholds met),
//   < 0.85 high (thresholds exceeded by a wide margin or signals combined),
//   >= 0.85 critical (extreme: several multiples over, with aggravating facts).
import type { Severity } from '../../framework/detector.ts';

export function severityOf(score: number): Severity {
  if (score >= 0.85) return 'critical';
  if (score >= 0.65) return 'high';
  if (score >= 0.4) return 'medium';
  return 'low';
}

// Scores stay inside (0, 1): no hit is certain, and every hit is worth something.
export function finalScore(score: number): number {
  return Math.round(Math.min(0.97, Math.max(0.05, score)) * 100) / 100;
}

// How far an observation is over its threshold, on a log scale: `perDoubling` for every doubling
// of the threshold, at most `cap`. Counts and sums grow multiplicatively, so twice the threshold
// is one step, four times two steps.
export function excess(observed: number, threshold: number, perDoubling: number, cap: number): number {
  if (!(threshold > 0) || !(observed > threshold)) return 0;
  return Math.min(cap, Math.log2(observed / threshold) * perDoubling);
}
