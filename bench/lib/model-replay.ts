// Judging accounts with a learned model by replay: each account is evaluated through the
// framework (data needs, parameters, the learned detector) at each of its instants in time order,
// as the detection pipeline would have judged it, until one evaluation raises a hit. Read-only:
// nothing is written, so one ingested world can be judged by several models.
import { SubjectContext, type DetectionStores } from '../../services/detection/framework/context.ts';
import { evaluateSubject } from '../../services/detection/framework/evaluate.ts';
import { prefetch } from '../../services/detection/framework/prefetch.ts';
import type { Hit } from '../../services/detection/framework/detector.ts';
import { compileRuleset } from '../../services/detection/framework/ruleset.ts';
import { learnedModel, LEARNED_DETECTOR_ID } from '../../services/detection/models/detector.ts';

// Accounts judged per prefetch (one snapshot each, covering all of its instants).
const CHUNK = 400;
const CONCURRENCY = 4;

export interface ReplayResult {
  flagged: Set<string>;
  // Each flagged account's first hit: what an analyst would have been shown first.
  firstHits: Map<string, Hit>;
  evaluations: number;
}

export async function replayModel(stores: DetectionStores, tenantId: string, modelId: string, accounts: ReadonlyMap<string, readonly Date[]>): Promise<ReplayResult> {
  const compiled = compileRuleset(1, { name: 'replay', detectors: { [LEARNED_DETECTOR_ID]: { params: { model: modelId } } } }, [learnedModel]);
  if (!compiled.ok) throw new Error(JSON.stringify(compiled.issues));
  const ruleset = compiled.ruleset;
  const seen = new Set(['movement']);
  const flagged = new Set<string>();
  const firstHits = new Map<string, Hit>();
  let evaluations = 0;
  const entries = [...accounts].filter(([, instants]) => instants.length > 0);
  let next = 0;
  const worker = async () => {
    while (next < entries.length) {
      const chunk = entries.slice(next, next + CHUNK);
      next += CHUNK;
      // The first and the last instant of each account: its snapshot covers every one between.
      const items = chunk.flatMap(([account, instants]) => [instants[0]!, instants[instants.length - 1]!].map((at) => ({ tenantId, subject: { kind: 'account' as const, id: account }, at })));
      const prefetched = await prefetch(stores, items);
      for (const [i, [account, instants]] of chunk.entries()) {
        const data = prefetched[2 * i]!;
        for (const at of instants) {
          const ctx = new SubjectContext(stores, tenantId, 'USD', { kind: 'account', id: account }, at, null, data);
          const [evaluation] = await evaluateSubject(ctx, ruleset, 'movement', seen);
          evaluations += 1;
          if (evaluation?.outcome.outcome === 'hit') {
            flagged.add(account);
            firstHits.set(account, evaluation.outcome);
            break;
          }
        }
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return { flagged, firstHits, evaluations };
}

export function quality(flagged: ReadonlySet<string>, labels: ReadonlyMap<string, boolean>, judged: Iterable<string>): { precision: number; recall: number; f1: number; flagged: number; positives: number; tp: number } {
  let tp = 0;
  let positives = 0;
  let flaggedJudged = 0;
  for (const account of judged) {
    const fraud = labels.get(account) === true;
    if (fraud) positives += 1;
    if (flagged.has(account)) {
      flaggedJudged += 1;
      if (fraud) tp += 1;
    }
  }
  const precision = flaggedJudged ? tp / flaggedJudged : 0;
  const recall = positives ? tp / positives : 0;
  return { precision, recall, f1: precision + recall ? (2 * precision * recall) / (precision + recall) : 0, flagged: flaggedJudged, positives, tp };
}
