// The default ruleset's tuned parameters, for `npm run eval -- --cross`: each with the values it
// may take and how to tell, from a hit recorded at the loosest value, whether the hit would also
// be raised at a stricter one. Every tuned parameter is a threshold whose observation the hit's
// evidence records (its thresholds or facts), and the detectors are monotone in it: a hit at a
// stricter value is a hit at the loosest one whose observation also clears the stricter value.
// So one run of a data set under the loosest values (`sweepRuleset`) tells what every
// combination of values would flag, and the choice is made on one set and judged on the other.
import { DETECTOR_LIBRARY } from '../../services/detection/library.ts';
import { defaultRulesetDocument, type RulesetDocument } from '../../services/detection/framework/ruleset.ts';

// What a recorded hit carries: its detector and evidence (as the API returns them).
export interface RecordedHit {
  detector: string;
  evidence: { thresholds: Array<{ name: string; threshold: unknown; observed: unknown }>; facts?: Record<string, unknown> };
}

interface TunedParameter {
  detector: string;
  param: string;
  // Loosest first (the smallest of a minimum, the largest of a maximum); the shipped default is
  // one of them.
  values: readonly number[];
  // Whether the hit, recorded at values[0], would also be raised at `value`.
  passes(hit: RecordedHit, value: number): boolean;
}

const observed = (hit: RecordedHit, name: (n: string) => boolean): number[] =>
  hit.evidence.thresholds.filter((t) => name(t.name)).map((t) => Number(t.observed));
const thresholdOf = (hit: RecordedHit, name: string): number | undefined => {
  const found = hit.evidence.thresholds.find((t) => t.name === name);
  return found === undefined ? undefined : Number(found.threshold);
};

const TUNED: readonly TunedParameter[] = [
  {
    // Transfers to (or from) one counterparty within the window.
    detector: 'split_transfers',
    param: 'minCount',
    values: [2, 3, 4],
    passes: (hit, value) => observed(hit, (n) => /^movements_(in|out)_one_counterparty$/.test(n)).some((count) => count >= value),
  },
  {
    // Parties under an open alert among the flows' counterparties: the network context
    // mule_network judges. At a stricter value the hit loses that indicator when it saw fewer,
    // and stands if it still has enough indicators, one of them context.
    detector: 'mule_network',
    param: 'minLinkedCounterparties',
    values: [1, 2, 3],
    passes: (hit, value) => {
      const indicators = (hit.evidence.facts?.indicators as string[] | undefined) ?? [];
      const linked = observed(hit, (n) => n === 'linked_counterparties')[0] ?? 0;
      const kept = indicators.filter((i) => i !== 'deals_with_flagged' || linked >= value);
      const needed = thresholdOf(hit, 'indicators') ?? Number.POSITIVE_INFINITY;
      return kept.length >= needed && kept.some((i) => ['young_account', 'shares_with_flagged', 'deals_with_flagged'].includes(i));
    },
  },
  {
    // Distinct counterparties on the wider side of a pass-through: a chain's link is narrow.
    detector: 'pass_through',
    param: 'maxCounterpartiesPerSide',
    values: [1000, 3, 2, 1],
    passes: (hit, value) => observed(hit, (n) => n === 'counterparties_per_side').every((width) => width <= value),
  },
];

export type Choice = ReadonlyMap<TunedParameter, number>;

// Every combination of the tuned values.
export function choices(): Choice[] {
  let out: Array<Map<TunedParameter, number>> = [new Map()];
  for (const tuned of TUNED) out = out.flatMap((choice) => tuned.values.map((value) => new Map(choice).set(tuned, value)));
  return out;
}

// Whether a hit recorded under the sweep ruleset is raised under `choice`.
export const raisedUnder = (hit: RecordedHit, choice: Choice): boolean =>
  [...choice].every(([tuned, value]) => tuned.detector !== hit.detector || value === tuned.values[0] || tuned.passes(hit, value));

export const describeChoice = (choice: Choice): string => [...choice].map(([t, v]) => `${t.detector}.${t.param}=${v}`).join(', ');

// The built-in default ruleset with every tuned parameter at its loosest value.
export function sweepRuleset(): RulesetDocument {
  const document = defaultRulesetDocument(DETECTOR_LIBRARY);
  for (const tuned of TUNED) {
    const config = document.detectors[tuned.detector];
    if (!config) throw new Error(`the default ruleset has no detector ${tuned.detector}`);
    config.params = { ...config.params, [tuned.param]: tuned.values[0] };
  }
  return { ...document, name: 'eval-sweep', description: 'The default ruleset with every tuned parameter at its loosest value (bench/lib/tuning.ts).' };
}

// The shipped default of each tuned parameter (the detector's own parameter default).
export function shippedChoice(): Choice {
  const out = new Map<TunedParameter, number>();
  for (const tuned of TUNED) {
    const detector = DETECTOR_LIBRARY.find((d) => d.id === tuned.detector);
    const value = (detector?.params.parse({}) as Record<string, unknown> | undefined)?.[tuned.param];
    if (typeof value !== 'number') throw new Error(`${tuned.detector}.${tuned.param} has no numeric default`);
    out.set(tuned, value);
  }
  return out;
}
