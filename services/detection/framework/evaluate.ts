// One subject, one instant, one ruleset: which detectors apply, whether their data is there and
// fresh, and what each answers. Data needs are checked here, once for every detector, so a
// detector's own code only ever runs on data that exists.
import type { DataNeed, DetectorOutcome, TriggerKind, AnyDetector, SubjectKind } from './detector.ts';
import { nonResult } from './detector.ts';
import type { EntityVersion, SubjectContext } from './context.ts';
import type { CompiledRuleset, ConfiguredDetector } from './ruleset.ts';

const DAY_MS = 86_400_000;

export interface Evaluation {
  detector: AnyDetector;
  outcome: DetectorOutcome;
}

// Fact families (movement, control_event) the tenant has sent at all.
export type FamiliesSeen = ReadonlySet<string>;

export async function evaluateSubject(ctx: SubjectContext, ruleset: CompiledRuleset, trigger: TriggerKind, familiesSeen: FamiliesSeen): Promise<Evaluation[]> {
  const applicable = applicableDetectors(ruleset, ctx.subject.kind, trigger);
  if (applicable.length === 0) return [];
  // The versions every data need is checked against, read once for all the detectors (both are
  // memoised in the context; an account's is null for a party).
  const party = await ctx.party();
  const account = await ctx.account();
  const segment = typeof party?.data.segment === 'string' ? party.data.segment : undefined;
  const kyc = party?.data.kyc as { tier?: unknown } | undefined;
  const tier = typeof kyc?.tier === 'string' ? kyc.tier : undefined;
  // Detectors run at the same time; a check that fails answers without a promise of its own
  // (these run for every detector of every subject: their promises were a tenth of detection's
  // allocations, and collecting them much of its garbage collection).
  // A mix of values and promises is what Promise.all takes here; evaluate is called on its detector.
  const outcomes = await Promise.all(
    // oxlint-disable-next-line typescript/await-thenable, typescript/unbound-method
    applicable.map(({ detector, paramsFor }) => unmetNeed(ctx, detector.needs, familiesSeen, party, account) ?? detector.evaluate(ctx, paramsFor(segment, tier))),
  );
  return applicable.map(({ detector }, i) => ({ detector, outcome: outcomes[i]! }));
}

// The detectors of a ruleset that judge a kind of subject on a trigger, worked out once per
// ruleset (a compiled ruleset never changes).
const applicableByRuleset = new WeakMap<CompiledRuleset, Map<string, ConfiguredDetector[]>>();

function applicableDetectors(ruleset: CompiledRuleset, kind: SubjectKind, trigger: TriggerKind): ConfiguredDetector[] {
  let byCase = applicableByRuleset.get(ruleset);
  if (!byCase) {
    byCase = new Map();
    applicableByRuleset.set(ruleset, byCase);
  }
  const key = `${kind}\u0000${trigger}`;
  let applicable = byCase.get(key);
  if (!applicable) {
    applicable = ruleset.detectors.filter(({ detector }) => detector.subjects.includes(kind) && detector.triggers.includes(trigger));
    byCase.set(key, applicable);
  }
  return applicable;
}

function unmetNeed(ctx: SubjectContext, needs: readonly DataNeed[], familiesSeen: FamiliesSeen, party: EntityVersion | null, account: EntityVersion | null): DetectorOutcome | undefined {
  for (const need of needs) {
    if (need.family === 'movement' || need.family === 'control_event') {
      if (!familiesSeen.has(need.family)) return nonResult('insufficient_data', `no ${need.family} data has been received for this tenant`);
      continue;
    }
    if (need.family === 'account' && ctx.subject.kind !== 'account') continue;
    const version = need.family === 'party' ? party : account;
    if (!version) return nonResult('insufficient_data', `the subject's ${need.family} has not been received`);
    if (need.maxAgeDays !== undefined && ctx.at.getTime() - version.occurredAt.getTime() > need.maxAgeDays * DAY_MS) {
      return nonResult('stale', `the subject's ${need.family} data is older than ${need.maxAgeDays} days`);
    }
  }
  return undefined;
}

