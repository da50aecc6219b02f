// Large cash aggregate: the cash a subject paid in, or took out, over 24 hours and over 7 days
// reaching a reporting-style threshold (the US CTR aggregates cash in and cash out separately
// per business day at USD 10,000; the 7-day threshold catches the same cash spread over a week).
// Directions are judged separately by default: depositing 6,000 and withdrawing 6,000 is not
// 12,000 of cash handled in the CTR sense; `combineDirections` adds them for operators who want it.
// Cash is the activity's cash flag (the movement's `cash`, or a cash_in / cash_out type).
//
// Severity: excess = the largest observed / threshold among the thresholds crossed (grade.ts).
import { z } from 'zod';
import type { WindowName, WindowStats } from '../../../../platform/aggregates/port.ts';
import { defineDetector, noHit, nonResult, type DetectorOutcome, type ThresholdCrossed } from '../../framework/detector.ts';
import { aboveZero } from '../../framework/parameter-rules.ts';
import { dealings } from './dealings.ts';
import { byAmount, evidenceOf } from './evidence.ts';
import { grade } from './grade.ts';
import { formatMoney } from '../../framework/money-text.ts';
import { minorUnits, ratio } from './money.ts';

const params = z.strictObject({
  // Base minor units: 10,000.00 in a base asset of scale 2.
  threshold24h: minorUnits('1000000'),
  // A week of cash just under the daily threshold every other day still adds up.
  threshold7d: minorUnits('2500000'),
  combineDirections: z.boolean().default(false),
});

interface Crossing {
  window: WindowName;
  direction: 'in' | 'out' | 'in+out';
  observed: bigint;
  threshold: bigint;
}

export const largeCashAggregate = defineDetector({
  id: 'large_cash_aggregate',
  typology: 'Large cash aggregate',
  version: 1,
  subjects: ['account', 'party'],
  triggers: ['movement'],
  needs: [{ family: 'movement' }],
  windows: ['24h', '7d'],
  params,
  rules: [aboveZero('threshold24h'), aboveZero('threshold7d')],
  // Cash agents handle other people's cash all day: only volumes far above a shop's are unusual.
  segmentDefaults: { cash_agent: { threshold24h: '10000000', threshold7d: '50000000' } },
  async evaluate(ctx, p): Promise<DetectorOutcome> {
    const stats = await ctx.windows({ windows: ['24h', '7d'] });
    const limits: Record<string, bigint> = { '24h': BigInt(p.threshold24h), '7d': BigInt(p.threshold7d) };
    const crossings = stats.flatMap((w) => crossingsOf(w, limits[w.window]!, p.combineDirections));
    if (crossings.length === 0) {
      // Cash without a base-asset amount (no FX rate) is counted, never summed (decision 0008): any
      // of it could have crossed, so the subject was not judged. Listed only when some activity of
      // the week is unpriced.
      const week = stats.find((w) => w.window === '7d')!;
      if (week.in.unpriced + week.out.unpriced === 0) return noHit();
      const { records } = await dealings(ctx, week.from);
      const unpricedCash = records.filter((r) => r.cash && r.baseValue === null).length;
      return unpricedCash > 0
        ? nonResult('insufficient_data', `${unpricedCash} cash movement(s) of the week have no base-asset amount (no FX rate); the priced cash stays under the thresholds`)
        : noHit();
    }

    // The evidence covers the widest window crossed, which contains the narrower one.
    const widest = crossings.some((c) => c.window === '7d') ? stats.find((w) => w.window === '7d')! : stats.find((w) => w.window === '24h')!;
    const { records, truncated } = await dealings(ctx, widest.from);
    // Cash of the direction(s) that crossed first, largest first.
    const crossed = new Set(crossings.flatMap((c) => (c.direction === 'in+out' ? ['in', 'out'] : [c.direction])));
    const cash = records.filter((r) => r.cash).sort((a, b) => Number(crossed.has(b.direction)) - Number(crossed.has(a.direction)) || byAmount(a, b));
    const strongest = crossings.reduce((a, b) => (ratio(b.observed, b.threshold) > ratio(a.observed, a.threshold) ? b : a));
    const thresholds: ThresholdCrossed[] = crossings.map((c) => ({
      name: `cash_${c.direction}_${c.window}`,
      threshold: c.threshold.toString(),
      observed: c.observed.toString(),
    }));
    const { severity, score } = grade(ratio(strongest.observed, strongest.threshold));
    return {
      outcome: 'hit',
      severity,
      score,
      evidence: evidenceOf(ctx, {
        records: cash,
        from: widest.from,
        to: widest.to,
        thresholds,
        amounts: {
          total: widest.in.cashSum + widest.out.cashSum,
          count: widest.in.cashCount + widest.out.cashCount,
          in: widest.in.cashSum,
          out: widest.out.cashSum,
        },
        facts: { listing_truncated: truncated },
      }),
      summary:
        `${formatMoney(strongest.observed, ctx.baseAsset)} of cash ${directionWords(strongest.direction)} over ${strongest.window} ` +
        `reached the ${formatMoney(strongest.threshold, ctx.baseAsset)} threshold` +
        (crossings.length > 1 ? ` (${crossings.length} cash thresholds crossed).` : '.'),
    };
  },
});

function crossingsOf(w: WindowStats, threshold: bigint, combine: boolean): Crossing[] {
  const observed: Array<[Crossing['direction'], bigint]> = combine
    ? [['in+out', w.in.cashSum + w.out.cashSum]]
    : [['in', w.in.cashSum], ['out', w.out.cashSum]];
  return observed.filter(([, sum]) => sum > 0n && sum >= threshold).map(([direction, sum]) => ({ window: w.window, direction, observed: sum, threshold }));
}

function directionWords(direction: Crossing['direction']): string {
  return direction === 'in' ? 'paid in' : direction === 'out' ? 'taken out' : 'handled (in and out)';
}
