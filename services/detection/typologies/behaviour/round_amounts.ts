// Round amounts: many movements of whole thousands (as the customer sent them, in their own
// asset) over a week, making up a large share of everything the subject did. Real purchases,
// salaries and bills are rarely round; cash placed or moved between mules often is. Roundness
// alone proves little, so the signal is weak: it needs a count, a share and a sum together.
//
// Severity: excess = the smaller of count / minCount and sum / minSum (grade.ts), as a weak
// signal (low at the thresholds).
import { z } from 'zod';
import { defineDetector, noHit, type DetectorOutcome } from '../../framework/detector.ts';
import { isRound, LISTING_LIMIT } from './dealings.ts';
import { byAmount, evidenceOf } from './evidence.ts';
import { grade } from './grade.ts';
import { formatMoney } from '../../framework/money-text.ts';
import { minorUnits, ratio, round2, sumOf } from './money.ts';

const params = z.strictObject({
  window: z.enum(['24h', '7d', '30d']).default('7d'),
  roundMajorUnits: z.number().int().min(1).default(1000),
  minCount: z.number().int().min(2).default(5),
  // 0..1 of all the subject's movements in the window.
  minShare: z.number().min(0).max(1).default(0.5),
  // Base minor units: 20,000.00.
  minSum: minorUnits('2000000'),
});

export const roundAmounts = defineDetector({
  id: 'round_amounts',
  typology: 'Many round amounts',
  version: 1,
  subjects: ['account', 'party'],
  triggers: ['movement'],
  needs: [{ family: 'movement' }],
  windows: ['24h', '7d', '30d'],
  params,
  async evaluate(ctx, p): Promise<DetectorOutcome> {
    const stats = await ctx.window(p.window, { roundMajorUnits: p.roundMajorUnits });
    const all = stats.in.count + stats.out.count;
    const round = stats.roundAmounts;
    const share = all > 0 ? round.count / all : 0;
    const minSum = BigInt(p.minSum);
    if (round.count < p.minCount || share < p.minShare || round.sum < minSum || round.sum === 0n) return noHit();

    const listing = await ctx.activities(stats.from, { limit: LISTING_LIMIT });
    const listed = listing.filter((r) => isRound(r, p.roundMajorUnits)).sort(byAmount);
    const complete = listing.length < LISTING_LIMIT;
    const { severity, score } = grade(Math.min(round.count / p.minCount, ratio(round.sum, minSum)), { weak: true });
    return {
      outcome: 'hit',
      severity,
      score,
      evidence: evidenceOf(ctx, {
        records: listed,
        from: stats.from,
        to: stats.to,
        thresholds: [
          { name: 'round_count', threshold: p.minCount, observed: round.count },
          { name: 'round_share', threshold: p.minShare, observed: round2(share) },
          { name: 'round_sum', threshold: p.minSum, observed: round.sum.toString() },
        ],
        amounts: {
          total: round.sum,
          count: round.count,
          // Per direction only when every round activity was listed.
          ...(complete
            ? { in: sumOf(listed.filter((r) => r.direction === 'in').map((r) => r.baseValue)), out: sumOf(listed.filter((r) => r.direction === 'out').map((r) => r.baseValue)) }
            : {}),
        },
        facts: { round_major_units: p.roundMajorUnits, all_movements: all, listing_truncated: !complete },
      }),
      summary:
        `${round.count} of ${all} movements in ${p.window} were whole multiples of ${p.roundMajorUnits} (${Math.round(share * 100)}% >= ${Math.round(p.minShare * 100)}%), ` +
        `${formatMoney(round.sum, ctx.baseAsset)} in all (minimum ${formatMoney(minSum, ctx.baseAsset)}).`,
    };
  },
});
