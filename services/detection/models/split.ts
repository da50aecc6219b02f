// A stratified split: the same share of each class goes to the held-back part, chosen by a
// seeded shuffle so the same labels always split the same way (a model's report can be redone).

// mulberry32: a small, well-known seeded generator; enough to shuffle, not for secrets.
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function shuffled<T>(items: readonly T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i -= 1) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

// Indices of the training and held-back parts; each class keeps at least one example on each side
// when it has two or more.
export function stratifiedSplit(labels: readonly boolean[], heldOutShare: number, seed: number): { train: number[]; heldOut: number[] } {
  const random = seededRandom(seed);
  const train: number[] = [];
  const heldOut: number[] = [];
  for (const cls of [true, false]) {
    const members = shuffled(labels.flatMap((label, i) => (label === cls ? [i] : [])), random);
    let take = Math.round(members.length * heldOutShare);
    if (members.length >= 2) take = Math.min(Math.max(take, 1), members.length - 1);
    heldOut.push(...members.slice(0, take));
    train.push(...members.slice(take));
  }
  return { train: train.sort((a, b) => a - b), heldOut: heldOut.sort((a, b) => a - b) };
}
