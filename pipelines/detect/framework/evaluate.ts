// One subject, one instant, one ruleset: which detectors apply, whether their data is there and
// fresh, and what each answers. Data needs are checked here, once for every detector, so a
// detector's own code only ever runs on data that exists.
import type { DataNeed, DetectorOutcome, TriggerKind, AnyDetector } from './detector.ts';
import { nonResult } from './detector.ts';
import type { SubjectContext } from './context.ts';
import type { CompiledRuleset } from './ruleset.ts';

const DAY_MS = 86_400_000;

export interface Evaluation {
  detector: AnyDetector;
  outcome: DetectorOutcome;
}

// Fact families (movement, control_event) the tenant has sent at all.
export type FamiliesSeen = ReadonlySet<string>;

export async function evaluateSubject(ctx: SubjectContext, ruleset: CompiledRuleset, trigger: TriggerKind, familiesSeen: FamiliesSeen): Promise<Evaluation[]> {
  const applicable = ruleset.detectors.filter(({ detector }) => detector.subjects.includes(ctx.subject.kind) && detector.triggers.includes(trigger));
  if (applicable.length === 0) return [];
  const party = await ctx.party();
  const segment = typeof party?.data.segment === 'string' ? party.data.segment : undefined;
  const tier = typeof party?.data.kyc?.tier === 'string' ? party.data.kyc.tier : undefined;
  return Promise.all(
    applicable.map(async ({ detector, paramsFor }) => {
      const missing = await unmetNeed(ctx, detector.needs, familiesSeen);
      if (missing) return { detector, outcome: missing };
      return { detector, outcome: await detector.evaluate(ctx, paramsFor(segment, tier)) };
    }),
  );
}

async function unmetNeed(ctx: SubjectContext, needs: readonly DataNeed[], familiesSeen: FamiliesSeen): Promise<DetectorOutcome | undefined> {
  for (const need of needs) {
    if (need.family === 'movement' || need.family === 'control_event') {
      if (!familiesSeen.has(need.family)) return nonResult('insufficient_data', `no ${need.family} data has been received for this tenant`);
      continue;
    }
    if (need.family === 'account' && ctx.subject.kind !== 'account') continue;
    const version = need.family === 'party' ? await ctx.party() : await ctx.account();
    if (!version) return nonResult('insufficient_data', `the subject's ${need.family} has not been received`);
    if (need.maxAgeDays !== undefined && ctx.at.getTime() - version.occurredAt.getTime() > need.maxAgeDays * DAY_MS) {
      return nonResult('stale', `the subject's ${need.family} data is older than ${need.maxAgeDays} days`);
    }
  }
  return undefined;
}

