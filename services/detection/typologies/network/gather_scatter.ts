// Gather-scatter (a collection hub): many accounts the subject never dealt with before pay into
// it, and it then pays many new accounts, passing on money of the order it gathered, within the
// window, more than its normal traffic. Businesses buy from some and sell to others every day,
// so most counterparties on both sides must be new, and their segments get higher counts.
//
// Score: 0.45 at both count thresholds (medium); +0.15 per doubling of the smaller of the two
// relative excesses (at most +0.3); +0.05 when the scattered sum is within 20 % of the gathered;
// +0.04 per doubling of the gathered inflow over its minimum (at most +0.08). Twice the counts
// on both sides is high; critical needs four times.
import { z } from 'zod';
import { defineDetector, nonResult, noHit, type ThresholdCrossed } from '../../framework/detector.ts';
import { notAbove } from '../../framework/parameter-rules.ts';
import { compareWithBaseline } from './baseline.ts';
import { formatMoney } from '../../framework/money-text.ts';
import { accountKey, byRelevance, graphSince, listed, moneyParam, moneyRatio, percent, ratio, spanOfDays, sumOf, windowOf } from './evidence.ts';
import { flowLimit, readFan } from './fan.ts';
import { excess, finalScore, severityOf } from './scoring.ts';

const params = z.strictObject({
  windowDays: z.number().int().min(1).max(90).default(10),
  // Distinct new accounts (of other parties) paying in, and paid out to.
  minSources: z.number().int().min(2).default(5),
  minTargets: z.number().int().min(2).default(5),
  // Share of each side's distinct counterparties that must be new.
  minNewShare: z.number().min(0).max(1).default(0.6),
  // Paid out to the new targets after the first new inflow, over that inflow.
  minRatio: z.number().min(0).default(0.5),
  maxRatio: z.number().min(0).default(1.5),
  minInflow: moneyParam('100000'),
  // The window's inbound movements must be at least this many times the account's daily normal
  // (over its last 90 days) scaled to the window, when it has baselineMinDays of history; 0: off.
  baselineMultiple: z.number().min(0).default(2),
  baselineMinDays: z.number().int().min(1).default(30),
});

const DAY_MS = 86_400_000;
const LISTED_PER_SIDE = 25;

export const gatherScatter = defineDetector({
  id: 'gather_scatter',
  typology: 'Gather-scatter (collection hub)',
  version: 1,
  subjects: ['account'],
  triggers: ['movement'],
  needs: [{ family: 'movement' }],
  windows: ['30d', '90d'],
  params,
  rules: [notAbove('minRatio', 'maxRatio')],
  segmentDefaults: {
    merchant: { minSources: 50, minTargets: 50, minNewShare: 0.8 },
    marketplace: { minSources: 100, minTargets: 100, minNewShare: 0.8 },
    payroll: { minTargets: 200, minNewShare: 0.8 },
    financial_institution: { minSources: 200, minTargets: 200, minNewShare: 0.8 },
    remittance_agent: { minSources: 40, minTargets: 40 },
    cash_agent: { minSources: 40, minTargets: 40 },
  },
  async evaluate(ctx, p) {
    const span = spanOfDays(ctx, p.windowDays);
    if (ctx.counterpartyAccountsAtMost('in', span.from) < p.minSources || ctx.counterpartyAccountsAtMost('out', span.from) < p.minTargets) return noHit();
    const hub = await ctx.gatherScatter(graphSince(span), flowLimit(Math.max(p.minSources, p.minTargets)));
    // The read takes the inflow, then the outflow, under one budget: either side can be the one cut.
    if (hub.truncated && (hub.sources.length === 0 || hub.targets.length === 0)) {
      return nonResult('insufficient_data', "the network read of the account's flows was cut short before it returned one of its sides");
    }
    if (hub.sources.length < p.minSources || hub.targets.length < p.minTargets) return noHit();
    const gathered = await readFan(ctx, 'in', p.windowDays, p.minSources, { counterparties: hub.sources, truncated: hub.truncated });
    if (gathered.kind !== 'read') return noHit();
    const scattered = await readFan(ctx, 'out', p.windowDays, p.minTargets, { counterparties: hub.targets, truncated: hub.truncated });
    if (scattered.kind !== 'read') return noHit();
    const sources = gathered.side;
    const targets = scattered.side;
    const sourceShare = sources.fresh.length / sources.counterparties.length;
    const targetShare = targets.fresh.length / targets.counterparties.length;
    if (sourceShare < p.minNewShare || targetShare < p.minNewShare) return noHit();
    // Gathering comes first: only payouts from the first new inflow on are its scattering.
    const firstIn = Math.min(...sources.movements.map((m) => m.occurredAt.getTime()));
    const outs = targets.movements.filter((m) => m.occurredAt.getTime() >= firstIn).sort(byRelevance);
    const outTargets = new Set(outs.map((m) => m.counterparty));
    if (outTargets.size < p.minTargets) return noHit();
    const inflow = sources.sum;
    const outflow = sumOf(outs);
    const minInflow = BigInt(p.minInflow);
    if (inflow < minInflow || inflow === 0n) return noHit();
    const flowRatio = moneyRatio(outflow, inflow);
    if (flowRatio < p.minRatio || flowRatio > p.maxRatio) return noHit();
    const baseline = await compareWithBaseline(ctx, 'in', p.windowDays * DAY_MS, { count: sources.activities.length }, {
      multiple: p.baselineMultiple,
      minDays: p.baselineMinDays,
    });
    if (baseline.compared && baseline.usual) return noHit();

    const thresholds: ThresholdCrossed[] = [
      { name: 'new_sources', threshold: p.minSources, observed: sources.fresh.length },
      { name: 'new_targets', threshold: p.minTargets, observed: outTargets.size },
      { name: 'new_source_share', threshold: p.minNewShare, observed: ratio(sourceShare) },
      { name: 'new_target_share', threshold: p.minNewShare, observed: ratio(targetShare) },
      { name: 'inflow', threshold: minInflow.toString(), observed: inflow.toString() },
      { name: 'out_in_ratio', threshold: p.minRatio, observed: ratio(flowRatio) },
    ];
    if (baseline.compared) thresholds.push(baseline.threshold);
    const multiple = Math.min(sources.fresh.length / p.minSources, outTargets.size / p.minTargets);
    const score = finalScore(
      0.45 + excess(multiple, 1, 0.15, 0.3) + (Math.abs(flowRatio - 1) <= 0.2 ? 0.05 : 0) + excess(Number(inflow), Number(minInflow), 0.04, 0.08),
    );
    const ins = sources.movements.map((m) => m.movementId);
    const outIds = outs.map((m) => m.movementId);
    return {
      outcome: 'hit',
      score,
      severity: severityOf(score),
      summary:
        `${sources.fresh.length} new accounts paid ${formatMoney(inflow, ctx.baseAsset)} into the account and it then paid ${outTargets.size} new accounts ` +
        `${formatMoney(outflow, ctx.baseAsset)} (${percent(flowRatio)}) within ${p.windowDays} days (thresholds ${p.minSources} sources, ${p.minTargets} targets).`,
      evidence: {
        movements: listed([...ins.slice(0, LISTED_PER_SIDE), ...outIds.slice(0, LISTED_PER_SIDE), ...ins.slice(LISTED_PER_SIDE), ...outIds.slice(LISTED_PER_SIDE)]),
        counterparties: listed([
          ...sources.fresh.slice(0, LISTED_PER_SIDE).map((c) => accountKey(c.account)),
          ...targets.fresh.filter((c) => outTargets.has(accountKey(c.account))).map((c) => accountKey(c.account)),
          ...sources.fresh.slice(LISTED_PER_SIDE).map((c) => accountKey(c.account)),
        ]),
        amounts: { total: inflow.toString(), count: sources.count + outs.length, asset: ctx.baseAsset, in: inflow.toString(), out: outflow.toString() },
        window: windowOf(span),
        thresholds,
        ...(baseline.compared ? { baseline: baseline.evidence } : {}),
        facts: {
          sources: sources.counterparties.length,
          new_sources: sources.fresh.length,
          targets: targets.counterparties.length,
          new_targets_after_gathering: outTargets.size,
          ratio: ratio(flowRatio),
          counterparties_truncated: hub.truncated,
        },
      },
    };
  },
});
