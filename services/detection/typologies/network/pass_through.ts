// Pass-through (rapid movement of funds): money arrives and nearly all of it leaves again within
// hours or days, leaving little behind, on an account for which that inflow is not normal. The
// calculation is in pass-through-flow.ts (shared with mule_network).
//
// Judged on the network around it too: a link in a laundering chain passes money from few
// accounts to few (one in, one out, most often), whereas an account paid by several people and
// paying several others in the same days is spending its income, however the sums happen to
// balance. So the pass must be narrow: at most maxCounterpartiesPerSide distinct counterparties
// on either side (chosen cross-dataset, docs/decisions/0026).
//
// Score: 0.45 when the shortest window qualifies (medium), 0.35 when only a longer one does
// (low: slower is weaker); +0.08 per doubling of the inflow over its minimum (at most +0.4);
// +0.05 when at least 95 % was forwarded. Critical needs a very large, complete and rapid pass.
import { z } from 'zod';
import { defineDetector, nonResult, noHit, type ThresholdCrossed } from '../../framework/detector.ts';
import { notAbove } from '../../framework/parameter-rules.ts';
import { formatMoney } from '../../framework/money-text.ts';
import { listed, moneyParam, percent, ratio, windowOf } from './evidence.ts';
import { findPassThrough } from './pass-through-flow.ts';
import { excess, finalScore, severityOf } from './scoring.ts';

const params = z.strictObject({
  // Segments whose business is passing money on (payroll, agents, institutions) turn it off.
  applies: z.boolean().default(true),
  windowHours: z.array(z.number().int().min(1).max(2160)).min(1).max(4).default([48, 168]),
  // Outflow after the first inflow, as a share of the inflow.
  minRatio: z.number().min(0).default(0.8),
  maxRatio: z.number().min(0).default(1.25),
  minInflow: moneyParam('100000'),
  // The window's inflow must be at least this many times the account's normal inflow for a
  // window that long (its daily mean over 90 days), when it has baselineMinDays of history; 0: off.
  baselineMultiple: z.number().min(0).default(2),
  baselineMinDays: z.number().int().min(1).default(30),
  maxCounterpartiesPerSide: z.number().int().min(1).default(2),
});

const LISTED_PER_SIDE = 25;

export const passThrough = defineDetector({
  id: 'pass_through',
  typology: 'Pass-through (rapid movement of funds)',
  version: 1,
  subjects: ['account'],
  triggers: ['movement'],
  needs: [{ family: 'movement' }],
  windows: ['24h', '7d', '90d'],
  params,
  rules: [notAbove('minRatio', 'maxRatio')],
  segmentDefaults: {
    payroll: { applies: false },
    remittance_agent: { applies: false },
    cash_agent: { applies: false },
    financial_institution: { applies: false },
    // Merchants and marketplaces settle what they take: only a large, unusual pass counts.
    merchant: { minInflow: '5000000', minRatio: 0.9 },
    marketplace: { minInflow: '5000000', minRatio: 0.9 },
  },
  async evaluate(ctx, p) {
    if (!p.applies) return nonResult('not_applicable', "passing money on is this account's business (its segment's rules turn the detector off)");
    const minInflow = BigInt(p.minInflow);
    const found = await findPassThrough(ctx, { ...p, minInflow });
    if (!found) return noHit();
    const width = Math.max(distinctCounterparties(found.ins), distinctCounterparties(found.outs));
    if (width > p.maxCounterpartiesPerSide) return noHit();
    const thresholds: ThresholdCrossed[] = [
      { name: 'inflow', threshold: minInflow.toString(), observed: found.inflow.toString() },
      { name: 'out_in_ratio', threshold: p.minRatio, observed: ratio(found.ratio) },
    ];
    if (found.baseline.compared) thresholds.push(found.baseline.threshold);
    thresholds.push({ name: 'counterparties_per_side', threshold: p.maxCounterpartiesPerSide, observed: width });
    const score = finalScore(
      (found.shortest ? 0.45 : 0.35) + excess(Number(found.inflow), Number(minInflow), 0.08, 0.4) + (found.ratio >= 0.95 ? 0.05 : 0),
    );
    const ins = found.ins.map((a) => a.movementId);
    const outs = found.outs.map((a) => a.movementId);
    return {
      outcome: 'hit',
      score,
      severity: severityOf(score),
      summary:
        `${formatMoney(found.inflow, ctx.baseAsset)} came in and ${percent(found.ratio)} of it (${formatMoney(found.outflow, ctx.baseAsset)}) ` +
        `went out again within ${found.hours} hours (thresholds: inflow ${formatMoney(minInflow, ctx.baseAsset)}, ratio ${percent(p.minRatio)}).`,
      evidence: {
        movements: listed([...ins.slice(0, LISTED_PER_SIDE), ...outs.slice(0, LISTED_PER_SIDE), ...ins.slice(LISTED_PER_SIDE), ...outs.slice(LISTED_PER_SIDE)]),
        // Where the money went first, then where it came from.
        counterparties: listed([...found.outs, ...found.ins].flatMap((a) => (a.counterparty === null ? [] : [a.counterparty]))),
        amounts: {
          total: found.inflow.toString(),
          count: found.ins.length + found.outs.length,
          asset: ctx.baseAsset,
          in: found.inflow.toString(),
          out: found.outflow.toString(),
        },
        window: windowOf(found.span),
        thresholds,
        ...(found.baseline.compared ? { baseline: found.baseline.evidence } : {}),
        facts: {
          flow_hours: found.flowHours,
          ratio: ratio(found.ratio),
          retained: (found.inflow - found.outflow).toString(),
          in_count: found.ins.length,
          out_count: found.outs.length,
          in_counterparties: distinctCounterparties(found.ins),
          out_counterparties: distinctCounterparties(found.outs),
          partial: found.partial,
        },
      },
    };
  },
});

// Movements with no identifiable counterparty count as one each: nothing says they are alike.
function distinctCounterparties(activities: ReadonlyArray<{ counterparty: string | null }>): number {
  const known = new Set(activities.flatMap((a) => (a.counterparty === null ? [] : [a.counterparty])));
  return known.size + activities.filter((a) => a.counterparty === null).length;
}
