// New counterparty, high amount: a movement to or from someone the subject has never dealt with
// before, large in absolute terms and against the subject's own daily flow in that direction.
// First payments of size to a new beneficiary are the moment account takeover, scams and mule
// recruitment show.
// Every movement of the last 24 hours is judged, the triggering one first: detection evaluates a
// subject once per batch, at its latest movement, so the trigger alone would miss an earlier
// movement of the same batch (and a scheduled or backtest evaluation has no trigger at all).
// Judging a movement again later is harmless: a hit overlapping an open alert updates it.
// "Never seen" means the subject's first activity with that counterparty is this movement. Own
// accounts and unidentifiable counterparties are not counterparties here.
// A subject with fewer than minBaselineDays of history cannot be judged (insufficient_data):
// while everything is new, a new counterparty says nothing, and judging on the absolute amount
// alone alerted on nearly every new customer's first large payment. Young accounts moving money
// on are mule_network's concern.
//
// Severity: excess = the smaller of amount / minAmount and amount / (k x mean daily flow) when
// the baseline applies (grade.ts).
import { z } from 'zod';
import type { ActivityRecord } from '../../../../platform/aggregates/port.ts';
import { defineDetector, noHit, nonResult, type DetectorOutcome, type ThresholdCrossed } from '../../framework/detector.ts';
import { notAbove } from '../../framework/parameter-rules.ts';
import { dealings, windowStart } from './dealings.ts';
import { counted, evidenceOf, movementFact } from './evidence.ts';
import { grade } from './grade.ts';
import { formatMoney } from '../../framework/money-text.ts';
import { minorUnits, ratio, round2 } from './money.ts';

const params = z.strictObject({
  // Base minor units: 5,000.00.
  minAmount: minorUnits('500000'),
  baselineMultiple: z.number().min(1).default(5),
  baselineDays: z.number().int().min(14).max(365).default(90),
  minBaselineDays: z.number().int().min(1).default(14),
  direction: z.enum(['in', 'out', 'both']).default('both'),
});

interface Candidate {
  record: ActivityRecord;
  amount: bigint;
  mean: bigint;
  excess: number;
}

export const newCounterpartyHighAmount = defineDetector({
  id: 'new_counterparty_high_amount',
  typology: 'High amount with a new counterparty',
  version: 1,
  subjects: ['account', 'party'],
  triggers: ['movement'],
  needs: [{ family: 'movement' }],
  windows: ['24h'],
  params,
  rules: [notAbove('minBaselineDays', 'baselineDays')],
  async evaluate(ctx, p): Promise<DetectorOutcome> {
    const triggerId = ctx.trigger?.object === 'movement' ? ctx.trigger.external_id : null;
    const from = windowStart(ctx, '24h');
    const { records } = await dealings(ctx, from);
    const minAmount = BigInt(p.minAmount);
    const judged = records.filter(
      (r) =>
        (p.direction === 'both' || r.direction === p.direction) &&
        r.counterparty !== null && r.baseValue !== null && r.baseValue >= minAmount && r.baseValue > 0n,
    );
    if (judged.length === 0) return noHit();

    const baseline = await ctx.baseline(p.baselineDays);
    if (baseline.days < p.minBaselineDays) {
      return nonResult('insufficient_data', `the subject has ${baseline.days} days of history before today; judging a new counterparty needs ${p.minBaselineDays}`);
    }
    const candidates: Candidate[] = [];
    for (const record of judged) {
      const history = await ctx.counterpartyHistory(record.counterparty!, record.occurredAt);
      if (history && history.firstSeenAt < record.occurredAt) continue;
      const amount = record.baseValue!;
      const mean = baseline[record.direction].meanSum;
      // Whole-number arithmetic: needed = mean x multiple, the multiple to two decimals, so an
      // amount exactly at the multiple hits (2.2 x 100000 is not 220000 in floating point).
      const needed = mean * BigInt(Math.round(p.baselineMultiple * 100));
      if (amount * 100n < needed) continue;
      const excess = Math.min(ratio(amount, minAmount), needed > 0n ? ratio(amount * 100n, needed) : Number.POSITIVE_INFINITY);
      candidates.push({ record, amount, mean, excess });
    }
    if (candidates.length === 0) return noHit();

    candidates.sort((a, b) => Number(b.record.movementId === triggerId) - Number(a.record.movementId === triggerId) || b.excess - a.excess);
    const top = candidates[0]!;
    const thresholds: ThresholdCrossed[] = [
      { name: 'amount', threshold: p.minAmount, observed: top.amount.toString() },
      // No daily flow in that direction at all: every amount is a multiple of nothing.
      ...(top.mean > 0n ? [{ name: `multiple_of_mean_daily_${top.record.direction}`, threshold: p.baselineMultiple, observed: round2(ratio(top.amount, top.mean)) }] : []),
    ];
    const { severity, score } = grade(top.excess);
    return {
      outcome: 'hit',
      severity,
      score,
      evidence: evidenceOf(ctx, {
        records: candidates.map((c) => c.record),
        from,
        to: ctx.at,
        thresholds,
        baseline: { days: baseline.days, mean: top.mean.toString(), stddev: baseline[top.record.direction].stddevSum.toString(), observed: top.amount.toString(), metric: `${top.record.direction}_sum` },
        facts: { new_counterparty_movements: candidates.map((c) => movementFact(c.record)) },
      }),
      summary:
        `${formatMoney(top.amount, ctx.baseAsset)} ${top.record.direction === 'out' ? 'sent to' : 'received from'} a counterparty never seen before ` +
        `(minimum ${formatMoney(minAmount, ctx.baseAsset)}` +
        (top.mean > 0n
          ? `, ${round2(ratio(top.amount, top.mean))}x the mean daily ${top.record.direction === 'out' ? 'outflow' : 'inflow'} >= ${p.baselineMultiple}x)`
          : `, no ${top.record.direction === 'out' ? 'outflow' : 'inflow'} at all over the last ${baseline.days} days)`) +
        (candidates.length > 1 ? `; ${counted(candidates.length - 1, 'more such movement')}.` : '.'),
    };
  },
});
