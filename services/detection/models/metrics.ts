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

// The score threshold (one of the scores seen) with the highest F1; 0.5 on a set without positives.
export function bestF1Threshold(examples: readonly Scored[]): number {
  const ranked = [...examples].sort((a, b) => b.score - a.score);
  const positives = ranked.filter((e) => e.label).length;
  if (positives === 0) return 0.5;
  let tp = 0;
  let best = { f1: -1, threshold: 0.5 };
  for (let i = 0; i < ranked.length; ) {
    let j = i;
    while (j < ranked.length && ranked[j]!.score === ranked[i]!.score) {
      if (ranked[j]!.label) tp += 1;
      j += 1;
    }
    const f1 = f1Of(tp / j, tp / positives);
    if (f1 > best.f1) best = { f1, threshold: ranked[i]!.score };
    i = j;
  }
  return best.threshold;
}
