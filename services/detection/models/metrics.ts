// Quality of scores against labels: precision, recall and F1 at a threshold, the precision-recall
// curve's area (average precision: the mean of the precision at each positive, ranked by score),
// and the threshold that maximises F1 on a set (chosen on training data, reported on held-back).

export interface Scored {
  score: number;
  label: boolean;
}

export interface AtThreshold {
  precision: number;
  recall: number;
  f1: number;
}

const f1Of = (precision: number, recall: number) => (precision + recall > 0 ? (2 * precision * recall) / (precision + recall) : 0);

export function atThreshold(examples: readonly Scored[], threshold: number): AtThreshold {
  let tp = 0;
  let flagged = 0;
  let positives = 0;
  for (const e of examples) {
    if (e.label) positives += 1;
    if (e.score >= threshold) {
      flagged += 1;
      if (e.label) tp += 1;
    }
  }
  const precision = flagged ? tp / flagged : 0;
  const recall = positives ? tp / positives : 0;
  return { precision, recall, f1: f1Of(precision, recall) };
}

// Ties are taken together: a run of equal scores is one step of the curve.
export function averagePrecision(examples: readonly Scored[]): number {
  const ranked = [...examples].sort((a, b) => b.score - a.score);
  const positives = ranked.filter((e) => e.label).length;
  if (positives === 0) return 0;
  let tp = 0;
  let sum = 0;
  for (let i = 0; i < ranked.length; ) {
    let j = i;
    let stepTp = 0;
    while (j < ranked.length && ranked[j]!.score === ranked[i]!.score) {
      if (ranked[j]!.label) stepTp += 1;
      j += 1;
    }
    tp += stepTp;
    sum += stepTp * (tp / j);
    i = j;
  }
  return sum / positives;
}

// The threshold with the highest F1 on these examples. Every threshold between the lowest score
// the best cut flags and the highest score it leaves out scores the same here; the middle of that
// gap, in log-odds, leaves the most room either way for an account not seen (on separable labels
// the lowest positive's score sits near 1, and an account a little less extreme than every
// training positive was missed). The lowest score itself when the cut leaves nothing out; 0.5 on
// a set without positives.
export function bestF1Threshold(examples: readonly Scored[]): number {
  const ranked = [...examples].sort((a, b) => b.score - a.score);
  const positives = ranked.filter((e) => e.label).length;
  if (positives === 0) return 0.5;
  let tp = 0;
  let best = { f1: -1, flagged: 0, next: null as number | null };
  for (let i = 0; i < ranked.length; ) {
    let j = i;
    while (j < ranked.length && ranked[j]!.score === ranked[i]!.score) {
      if (ranked[j]!.label) tp += 1;
      j += 1;
    }
    const f1 = f1Of(tp / j, tp / positives);
    if (f1 > best.f1) best = { f1, flagged: ranked[i]!.score, next: j < ranked.length ? ranked[j]!.score : null };
    i = j;
  }
  return best.next === null ? best.flagged : logOddsMidpoint(best.flagged, best.next);
}

const logOdds = (p: number) => Math.log(p / (1 - p));

// Halfway between two probabilities in log-odds; halfway in probability when one of them is 0 or 1.
function logOddsMidpoint(high: number, low: number): number {
  const middle = (logOdds(high) + logOdds(low)) / 2;
  return Number.isFinite(middle) ? 1 / (1 + Math.exp(-middle)) : (high + low) / 2;
}
