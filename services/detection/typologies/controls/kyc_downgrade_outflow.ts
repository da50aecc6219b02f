// The customer lowered the party's KYC standing (kyc.downgraded) or could not verify it
// (kyc.verification_failed), and money then left the party's accounts fast: the pattern of a
// customer emptying its accounts before the restrictions that follow a downgrade bite.
//
// Rule, for each such event E in (at - windowDays, at]: the outflow O is the priced outgoing
// money of the party strictly after E, up to at (transfers between its own accounts left out).
// A hit needs O >= minOutflow and, when the party has at least minBaselineDays of history,
// O >= baselineMultiple × its mean daily outflow × the days since E (at least one): a customer
// that always sends this much is not draining anything. Without that history the absolute
// floor alone decides (a new customer has no normal to compare with). The event giving the
// strongest ratio (the smaller of O/minOutflow and O/baseline threshold) is reported; the score
// starts at 0.5 (medium) and grows by 0.2 per doubling of that ratio, so twice both thresholds
// is high. The outflow must follow the event in event time, so this fires on the movement that
// makes O cross (see index.ts).
// When O falls short but some outflow after E had no base-asset amount (no FX rate), the answer
// is insufficient_data: the unpriced money might have crossed.
import { z } from 'zod';
import type { ControlEventFact, SubjectContext } from '../../framework/context.ts';
import { defineDetector, noHit, nonResult, type DetectorOutcome, type ThresholdCrossed } from '../../framework/detector.ts';
import { notAbove } from '../../framework/parameter-rules.ts';
import { controlEventsFor, describeEvent } from './control-events.ts';
import { DAY_MS, HOUR_MS, evidenceIds, uniqueCapped, windowOf } from './evidence.ts';
import { baselineOutflow, outflowsAfter, timesMultiple, type DailyOutflow, type Outflows } from './outflows.ts';
import { moneyRatio, scoreForRatio, severityOf } from './scoring.ts';

const DOWNGRADE_TYPES = ['kyc.downgraded', 'kyc.verification_failed'] as const;

const params = z.strictObject({
  types: z.array(z.enum(DOWNGRADE_TYPES)).min(1).default([...DOWNGRADE_TYPES]),
  windowDays: z.number().int().min(1).max(30).default(7),
  minOutflow: z.string().regex(/^\d+$/).default('500000'),
  baselineMultiple: z.number().min(1).max(100).default(3),
  baselineDays: z.number().int().min(7).max(365).default(90),
  minBaselineDays: z.number().int().min(1).max(365).default(30),
});

interface Candidate {
  event: ControlEventFact;
  outflow: Outflows;
  baselineThreshold: bigint | null;
  ratio: number;
}

export const kycDowngradeOutflow = defineDetector({
  id: 'kyc_downgrade_outflow',
  typology: 'Outflow after a KYC downgrade',
  version: 1,
  // KYC standing belongs to the party, and the drain is of all its accounts together: an account
  // subject would only repeat the party's alert with part of the money.
  subjects: ['party'],
  triggers: ['movement', 'control_event'],
  needs: [{ family: 'control_event' }, { family: 'movement' }],
  windows: ['7d', '90d'],
  params,
  rules: [notAbove('minBaselineDays', 'baselineDays')],
  async evaluate(ctx, p): Promise<DetectorOutcome> {
    const since = new Date(ctx.at.getTime() - p.windowDays * DAY_MS);
    const events = await controlEventsFor(ctx, since, p.types);
    if (events.length === 0) return noHit();
    const minOutflow = BigInt(p.minOutflow);
    const baseline = await baselineOutflow(ctx, p.baselineDays, p.minBaselineDays);

    const candidates: Candidate[] = [];
    let unpricedShortfall = false;
    for (const event of events) {
      const outflow = await outflowsAfter(ctx, event.occurredAt);
      const days = Math.max(1, (ctx.at.getTime() - event.occurredAt.getTime()) / DAY_MS);
      const baselineThreshold = baseline ? timesMultiple(baseline.mean, p.baselineMultiple * days) : null;
      const crossed = outflow.sum >= minOutflow && (baselineThreshold === null || outflow.sum >= baselineThreshold);
      if (!crossed) {
        if (outflow.unpriced > 0) unpricedShortfall = true;
        continue;
      }
      const ratio = Math.min(moneyRatio(outflow.sum, minOutflow), baselineThreshold === null ? Number.POSITIVE_INFINITY : moneyRatio(outflow.sum, baselineThreshold));
      candidates.push({ event, outflow, baselineThreshold, ratio });
    }
    const best = candidates.sort((a, b) => b.ratio - a.ratio)[0];
    if (!best) {
      return unpricedShortfall
        ? nonResult('insufficient_data', 'outflow after the KYC event stays under the thresholds, but some of it has no base-asset amount (no FX rate)')
        : noHit();
    }
    return hitFor(ctx, best, minOutflow, baseline, p.windowDays, since);
  },
});

function hitFor(
  ctx: SubjectContext,
  { event, outflow, baselineThreshold, ratio }: Candidate,
  minOutflow: bigint,
  baseline: DailyOutflow | null,
  windowDays: number,
  since: Date,
): DetectorOutcome {
  const score = scoreForRatio(ratio, 0.5, 0.2, 0.89);
  const thresholds: ThresholdCrossed[] = [{ name: 'outflow_after_kyc_event', threshold: minOutflow.toString(), observed: outflow.sum.toString() }];
  if (baselineThreshold !== null) thresholds.push({ name: 'outflow_vs_baseline', threshold: baselineThreshold.toString(), observed: outflow.sum.toString() });
  const hours = Math.round((ctx.at.getTime() - event.occurredAt.getTime()) / HOUR_MS);
  // Measured to the latest outflow cited, not to the evaluation: a fact that grew with the clock
  // made a later judgement of the same outflows read as new evidence, reopening a disposed alert.
  const latestOutflow = Math.max(...outflow.priced.map((a) => a.occurredAt.getTime()));
  return {
    outcome: 'hit',
    score,
    severity: severityOf(score),
    summary:
      `${outflow.priced.length} outgoing movement(s) sent ${outflow.sum} ${ctx.baseAsset} minor units in the ${hours} hour(s) after ${event.type} ${event.externalId} ` +
      `(minimum ${minOutflow}${baselineThreshold !== null ? `; ${baselineThreshold} expected from the baseline` : '; no baseline, absolute minimum only'}).`,
    evidence: {
      movements: evidenceIds(ctx, outflow.priced.map((a) => a.movementId)),
      counterparties: uniqueCapped(outflow.priced.map((a) => a.counterparty)),
      amounts: { total: outflow.sum.toString(), count: outflow.priced.length, asset: ctx.baseAsset, out: outflow.sum.toString() },
      window: windowOf(since, ctx.at),
      thresholds,
      ...(baseline ? { baseline: { days: baseline.days, mean: baseline.mean.toString(), stddev: baseline.stddev.toString(), observed: outflow.sum.toString(), metric: 'daily outgoing sum' } } : {}),
      facts: {
        control_events: [describeEvent(event)],
        hours_to_latest_outflow: Math.round((latestOutflow - event.occurredAt.getTime()) / HOUR_MS),
        unpriced_outflows: outflow.unpriced,
        outflows_truncated: outflow.truncated,
        window_days: windowDays,
      },
    },
  };
}
