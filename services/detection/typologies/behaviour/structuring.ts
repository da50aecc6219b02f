// Structuring: repeated amounts just below a reporting threshold. Counted over every movement the
// subject makes with someone else, in both directions and cash or not: structuring is done on
// deposits (cash placed in several branches, or transfers in) and on withdrawals alike, and a
// launderer who keeps every leg under the threshold shows the same shape in either direction.
// A party subject sees all of its accounts' movements, so amounts spread across several of its
// accounts add up; transfers between its own accounts are left out (they move nothing to anyone).
// `direction` and `cashOnly` narrow the rule for operators who want deposits or cash only.
// Refunds and reversals are left out (`excludeMovementTypes`): money given back by the other side,
// not an amount the subject chose to keep under the threshold (a reversal of one structured
// deposit would otherwise count as one more).
//
// Severity: excess = movements in the band / minCount (grade.ts), raised one level when the
// movements together reach 3× the threshold (that much was kept out of reporting).
import { z } from 'zod';
import { defineDetector, noHit, nonResult, type DetectorOutcome } from '../../framework/detector.ts';
import { aboveZero, below } from '../../framework/parameter-rules.ts';
import { dealings, windowStart } from './dealings.ts';
import { byAmount, counted, evidenceOf, movementFact } from './evidence.ts';
import { grade } from './grade.ts';
import { formatMoney } from '../../framework/money-text.ts';
import { minorUnits, sumOf } from './money.ts';
import { movementDataSchema } from '../../../../schemas/families/movement.ts';

const params = z.strictObject({
  // Base minor units: a 10,000.00 reporting threshold, "just below" = within 10 % under it.
  threshold: minorUnits('1000000'),
  margin: minorUnits('100000'),
  window: z.enum(['24h', '7d', '30d']).default('7d'),
  minCount: z.number().int().min(2).default(3),
  direction: z.enum(['in', 'out', 'both']).default('both'),
  cashOnly: z.boolean().default(false),
  excludeMovementTypes: z.array(movementDataSchema.shape.type).default(['refund', 'reversal']),
});

export const structuring = defineDetector({
  id: 'structuring',
  typology: 'Structuring below a reporting threshold',
  version: 1,
  subjects: ['party', 'account'],
  triggers: ['movement'],
  needs: [{ family: 'movement' }],
  windows: ['24h', '7d', '30d'],
  params,
  rules: [aboveZero('threshold'), below('margin', 'threshold')],
  async evaluate(ctx, p): Promise<DetectorOutcome> {
    const threshold = BigInt(p.threshold);
    const margin = BigInt(p.margin);
    const floor = threshold > margin ? threshold - margin : 0n;
    // The store's band count is an upper bound (it also counts internal transfers): a cheap
    // no_hit for almost every subject before anything is listed.
    const stats = await ctx.window(p.window, { thresholds: [{ threshold, margin: threshold - floor }] });
    // Movements without a base-asset amount (no FX rate) are in no band: as many of them as could
    // make up the count leave the subject unjudged rather than clear.
    const unpriced = stats.in.unpriced + stats.out.unpriced;
    if ((stats.belowThreshold[0]?.count ?? 0) + unpriced < p.minCount) return noHit();

    const { records, truncated } = await dealings(ctx, windowStart(ctx, p.window));
    const considered = records.filter((r) => (p.direction === 'both' || r.direction === p.direction) && (!p.cashOnly || r.cash));
    const banded = considered.filter((r) => r.baseValue !== null && r.baseValue >= floor && r.baseValue < threshold);
    // Types are read only for a count that would hit: almost no evaluation gets here.
    const types = banded.length >= p.minCount && p.excludeMovementTypes.length > 0 ? await ctx.movementTypes(banded.map((r) => r.movementId)) : undefined;
    const excluded = new Set<string>(p.excludeMovementTypes);
    const inBand = types ? banded.filter((r) => !excluded.has(types.get(r.movementId) ?? '')) : banded;
    if (inBand.length < p.minCount) {
      const unknown = considered.filter((r) => r.baseValue === null).length;
      return inBand.length + unknown >= p.minCount
        ? nonResult('insufficient_data', `${unknown} movement(s) in ${p.window} have no base-asset amount (no FX rate) and could be just below the threshold`)
        : noHit();
    }

    const total = sumOf(inBand.map((r) => r.baseValue));
    const accounts = ctx.subject.kind === 'account' ? [ctx.subject.id] : await ctx.accountsOfParty();
    const { severity, score } = grade(inBand.length / p.minCount, { corroborating: total >= 3n * threshold ? 1 : 0 });
    return {
      outcome: 'hit',
      severity,
      score,
      evidence: evidenceOf(ctx, {
        records: [...inBand].sort(byAmount),
        from: stats.from,
        to: stats.to,
        thresholds: [{ name: 'movements_just_below_threshold', threshold: p.minCount, observed: inBand.length }],
        facts: {
          band: { from: floor.toString(), below: threshold.toString() },
          // The party's accounts these movements went through (the subject account itself for an
          // account subject; for a party, the accounts it held in the window).
          accounts,
          movements: inBand.slice(0, 50).map(movementFact),
          listing_truncated: truncated,
        },
      }),
      summary:
        `${counted(inBand.length, 'movement')} between ${formatMoney(floor, ctx.baseAsset)} and ${formatMoney(threshold, ctx.baseAsset)} ` +
        `(just below the reporting threshold) in ${p.window}, ${formatMoney(total, ctx.baseAsset)} in all; the rule fires at ${p.minCount}.`,
    };
  },
});
