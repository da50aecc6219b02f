// Dormant reactivation: an account that did nothing for dormantDays (or that its institution
// declares dormant) suddenly moves money. Taken-over or sold accounts are often old quiet ones,
// woken up to pass funds through.
// The reactivation is the earliest activity in the last 24 hours; what it is measured against
// is the account's latest activity before it. The amount that matters is the larger of the
// day's inflow and outflow (money in then straight out is one amount passing through, not two).
// A declared-dormant account counts as reactivated only by activity after it was declared so
// (an account still marked dormant while in daily use is a data problem, not a new event).
// An account never active before and not declared dormant is not_applicable: a first movement
// is an opening, not a reactivation.
//
// Severity: excess = amount / minAmount (grade.ts), raised one level when the gap is at least
// twice the dormancy period.
import { z } from 'zod';
import { defineDetector, noHit, nonResult, type DetectorOutcome, type ThresholdCrossed } from '../../framework/detector.ts';
import { LISTING_LIMIT, windowStart } from './dealings.ts';
import { byAmount, evidenceOf } from './evidence.ts';
import { grade } from './grade.ts';
import { formatMoney } from '../../framework/money-text.ts';
import { maxOf, minorUnits, ratio, sumOf } from './money.ts';

const DAY_MS = 86_400_000;

const params = z.strictObject({
  dormantDays: z.number().int().min(1).default(180),
  // Base minor units: 1,000.00.
  minAmount: minorUnits('100000'),
});

export const dormantReactivation = defineDetector({
  id: 'dormant_reactivation',
  typology: 'Dormant account reactivated',
  version: 1,
  subjects: ['account'],
  triggers: ['movement'],
  needs: [{ family: 'account' }, { family: 'movement' }],
  windows: ['24h'],
  params,
  async evaluate(ctx, p): Promise<DetectorOutcome> {
    const from = windowStart(ctx, '24h');
    // Every activity, sweeps from the holder's other accounts included: any movement wakes it.
    const records = await ctx.activities(from, { limit: LISTING_LIMIT });
    const account = await ctx.account();
    if (records.length === 0) {
      const ever = await ctx.lastActivityBefore(ctx.at);
      if (ever === null && account?.data.status !== 'dormant') return notApplicable();
      return noHit();
    }
    const reactivatedAt = records[records.length - 1]!.occurredAt;
    const last = await ctx.lastActivityBefore(reactivatedAt);
    const declared = account?.data.status === 'dormant' && (last === null || last <= account.occurredAt);
    if (last === null && !declared) return notApplicable();
    const gapDays = last === null ? null : Math.floor((reactivatedAt.getTime() - last.getTime()) / DAY_MS);
    const quiet = gapDays !== null && gapDays >= p.dormantDays;
    if (!quiet && !declared) return noHit();

    const inflow = sumOf(records.filter((r) => r.direction === 'in').map((r) => r.baseValue));
    const outflow = sumOf(records.filter((r) => r.direction === 'out').map((r) => r.baseValue));
    const amount = maxOf(inflow, outflow);
    const minAmount = BigInt(p.minAmount);
    if (amount < minAmount || amount === 0n) return noHit();

    const thresholds: ThresholdCrossed[] = [
      ...(quiet ? [{ name: 'days_without_activity', threshold: p.dormantDays, observed: gapDays! }] : []),
      ...(declared ? [{ name: 'declared_status', threshold: 'dormant', observed: 'dormant' }] : []),
      { name: 'amount_after_reactivation', threshold: p.minAmount, observed: amount.toString() },
    ];
    const { severity, score } = grade(ratio(amount, minAmount), { corroborating: gapDays !== null && gapDays >= 2 * p.dormantDays ? 1 : 0 });
    return {
      outcome: 'hit',
      severity,
      score,
      evidence: evidenceOf(ctx, {
        records: [...records].sort(byAmount),
        from,
        to: ctx.at,
        thresholds,
        facts: {
          reactivated_at: reactivatedAt.toISOString(),
          previous_activity_at: last?.toISOString() ?? null,
          days_without_activity: gapDays,
          declared_dormant: declared,
        },
      }),
      summary:
        `${declared && !quiet ? 'Account declared dormant' : `Account inactive for ${gapDays} days (threshold ${p.dormantDays})`} moved ` +
        `${formatMoney(amount, ctx.baseAsset)} in the 24h after reactivation (minimum ${formatMoney(minAmount, ctx.baseAsset)}).`,
    };
  },
});

function notApplicable(): DetectorOutcome {
  return nonResult('not_applicable', 'the account has no activity before this movement and is not declared dormant');
}
