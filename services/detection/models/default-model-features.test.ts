import { describe, expect, it } from 'vitest';
import { DEFAULT_MODEL_FEATURES } from './default-model-features.ts';
import { FEATURE_SPEC } from './model.ts';

describe("the default model's features", () => {
  it('are every model\'s, with two payments with one counterparty in a day taken as ordinary', () => {
    expect(DEFAULT_MODEL_FEATURES.map((f) => f.name)).toEqual(FEATURE_SPEC.map((f) => f.name));
    expect(DEFAULT_MODEL_FEATURES.filter((f, i) => JSON.stringify(f) !== JSON.stringify(FEATURE_SPEC[i]))).toEqual([
      { name: 'max_same_counterparty_day', kind: 'count', ordinary: 2 },
    ]);
  });
});
