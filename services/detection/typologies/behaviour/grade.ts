// Severity and score of a hit from how far its thresholds were exceeded, one rule for the whole
// group so severities mean the same thing across behaviour detectors:
//   excess = observed / threshold of the gate that matters (>= 1 on a hit)
//   [1, 3) medium, [3, 10) high, >= 10 critical;
//   a weak single signal (one the typology alone rarely proves) is one level lower, never below
//   low; corroborating signals raise it by one each, but never to critical (critical is for an
//   extreme excess, not for several moderate ones).
// The score sits inside its severity's band (low .30-.49, medium .50-.69, high .70-.89,
// critical .90-.99), placed on a log scale of the excess within the band, so it grows with the
// excess and never contradicts the severity.
import { SEVERITIES, type Severity } from '../../framework/detector.ts';

const EDGES = [1, 3, 10, 100] as const;
const BANDS: Record<Severity, [number, number]> = {
  low: [0.3, 0.49],
  medium: [0.5, 0.69],
  high: [0.7, 0.89],
  critical: [0.9, 0.99],
};

export interface Grade {
  severity: Severity;
  score: number;
}

export function grade(excess: number, options: { weak?: boolean; corroborating?: number } = {}): Grade {
  const x = Number.isFinite(excess) ? Math.max(1, excess) : EDGES[3];
  // 0 for [1, 3), 1 for [3, 10), 2 from 10.
  const step = x >= EDGES[2] ? 2 : x >= EDGES[1] ? 1 : 0;
  const low = EDGES[step]!;
  const high = EDGES[step + 1]!;
  const within = Math.min(1, Math.log(x / low) / Math.log(high / low));
  const base = Math.max(0, 1 + step - (options.weak ? 1 : 0));
  const level = Math.min(base + (options.corroborating ?? 0), Math.max(base, 2));
  const severity = SEVERITIES[level]!;
  const [from, to] = BANDS[severity];
  return { severity, score: Math.round((from + within * (to - from)) * 100) / 100 };
}
