// Scatter-gather (layering through intermediaries): the account pays several intermediaries and
// they, after being paid, pay one and the same gathering account, all within the window. Two
// guards keep ordinary life out: the gathered money must be of the order of what was scattered
// (friends who each later pay the same landlord gather unrelated sums), and a gathering account
// held by a merchant, marketplace or institution is where everybody pays anyway.
//
// Score: 0.45 at the intermediary threshold (medium); +0.15 per doubling of the intermediaries
// (at most +0.3); +0.05 when the gathered sum is within 20 % of the scattered one; +0.04 per
// doubling of the gathered sum over its minimum (at most +0.08); +0.05 per further gathering
// account (at most +0.1). Twice the intermediaries is high; critical needs four times and more.
import { z } from 'zod';
import { partyDataSchema } from '../../../../schemas/families/party.ts';
import type { SubjectContext } from '../../framework/context.ts';
import { defineDetector, nonResult, noHit, type ThresholdCrossed } from '../../framework/detector.ts';
import { notAbove } from '../../framework/parameter-rules.ts';
import { formatMoney } from '../../framework/money-text.ts';
import { accountKey, accountOfKey, byRelevance, graphSince, listed, moneyParam, moneyRatio, percent, ratio, spanOfDays, windowOf } from './evidence.ts';
import { excess, finalScore, severityOf } from './scoring.ts';

const SEGMENTS = partyDataSchema.shape.segment.unwrap().options;

const params = z.strictObject({
  windowDays: z.number().int().min(1).max(90).default(10),
  minIntermediaries: z.number().int().min(2).default(4),
  // Sum gathered from the intermediaries over the sum scattered to them.
  minGatherRatio: z.number().min(0).default(0.5),
  maxGatherRatio: z.number().min(0).default(2),
  minGathered: moneyParam('50000'),
  // Gathering accounts whose holder is of these segments are not gatherers of a scheme.
  ignoreGathererSegments: z.array(z.enum(SEGMENTS)).default(['merchant', 'marketplace', 'financial_institution', 'payroll']),
});

const ACTIVITY_LIMIT = 1000;
const GATHERS_ASKED = 10;
// Receivers listed with their sums (the scattered amount of each intermediary).
const SCATTER_LISTED = 1000;

const unreadable = () => nonResult('insufficient_data', 'the network read of the scatter-gather paths was cut short before it returned anything');

export const scatterGather = defineDetector({
  id: 'scatter_gather',
  typology: 'Scatter-gather (layering through intermediaries)',
  version: 1,
  subjects: ['account'],
  triggers: ['movement'],
  needs: [{ family: 'movement' }],
  windows: ['30d'],
  params,
  rules: [notAbove('minGatherRatio', 'maxGatherRatio')],
  async evaluate(ctx, p) {
    const span = spanOfDays(ctx, p.windowDays);
    const since = graphSince(span);
    // An account that paid fewer accounts than the threshold cannot scatter: no path search.
    if (ctx.counterpartyAccountsAtMost('out', span.from) < p.minIntermediaries) return noHit();
    const paid = await ctx.fanOut(since, SCATTER_LISTED);
    if (paid.truncated && paid.counterparties.length === 0) return unreadable();
    if (!paid.truncated && paid.counterparties.length < p.minIntermediaries) return noHit();
    const found = await ctx.scatterGather({ since, minIntermediaries: p.minIntermediaries, limit: GATHERS_ASKED });
    if (found.truncated && found.gathers.length === 0) return unreadable();
    if (found.gathers.length === 0) return noHit();
    const scattered = new Map(paid.counterparties.map((c) => [c.account, c.sum]));
    const minGathered = BigInt(p.minGathered);
    const qualifying: Array<(typeof found.gathers)[number] & { scattered: bigint; ratio: number }> = [];
    for (const gather of found.gathers) {
      if (gather.account === ctx.subject.id || (await ignoredSegment(ctx, gather.account, p.ignoreGathererSegments))) continue;
      const out = gather.intermediaries.reduce((sum, mid) => sum + (scattered.get(mid) ?? 0n), 0n);
      if (out === 0n || gather.sum < minGathered) continue;
      const gatherRatio = moneyRatio(gather.sum, out);
      if (gatherRatio < p.minGatherRatio || gatherRatio > p.maxGatherRatio) continue;
      qualifying.push({ ...gather, scattered: out, ratio: gatherRatio });
    }
    // Only the gathering accounts reached through most intermediaries were read: when none of them
    // counts (merchants, say), one further down may.
    if (qualifying.length === 0) return found.truncated ? nonResult('insufficient_data', 'none of the gathering accounts read counts, and there were more than were read') : noHit();
    // The gathering account reached through most intermediaries leads.
    qualifying.sort((a, b) => b.intermediaries.length - a.intermediaries.length || (b.sum > a.sum ? 1 : b.sum < a.sum ? -1 : 0));
    const lead = qualifying[0]!;
    const mids = new Set(qualifying.flatMap((g) => g.intermediaries));
    const outs = (await ctx.activities(span.from, { direction: 'out', limit: ACTIVITY_LIMIT }))
      .filter((a) => mids.has(accountOfKey(a.counterparty) ?? ''))
      .sort(byRelevance);
    const gathered = qualifying.reduce((sum, g) => sum + g.sum, 0n);
    const scatteredTotal = [...mids].reduce((sum, mid) => sum + (scattered.get(mid) ?? 0n), 0n);
    const thresholds: ThresholdCrossed[] = [
      { name: 'intermediaries', threshold: p.minIntermediaries, observed: lead.intermediaries.length },
      { name: 'gathered', threshold: minGathered.toString(), observed: lead.sum.toString() },
      { name: 'gather_ratio', threshold: p.minGatherRatio, observed: ratio(lead.ratio) },
    ];
    const score = finalScore(
      0.45 +
        excess(lead.intermediaries.length, p.minIntermediaries, 0.15, 0.3) +
        (Math.abs(lead.ratio - 1) <= 0.2 ? 0.05 : 0) +
        excess(Number(lead.sum), Number(minGathered), 0.04, 0.08) +
        Math.min(0.1, (qualifying.length - 1) * 0.05),
    );
    return {
      outcome: 'hit',
      score,
      severity: severityOf(score),
      summary:
        `The account paid ${lead.intermediaries.length} intermediaries (threshold ${p.minIntermediaries}) who then paid one account ` +
        `${formatMoney(lead.sum, ctx.baseAsset)}, ${percent(lead.ratio)} of the ${formatMoney(lead.scattered, ctx.baseAsset)} scattered to them, within ${p.windowDays} days.`,
      evidence: {
        // The scattering legs: the gathering legs belong to the intermediaries' own movements.
        movements: listed(outs.map((a) => a.movementId)),
        counterparties: listed([...qualifying.map((g) => accountKey(g.account)), ...[...mids].map(accountKey)]),
        amounts: { total: gathered.toString(), count: outs.length, asset: ctx.baseAsset, out: scatteredTotal.toString() },
        window: windowOf(span),
        thresholds,
        facts: {
          gathers: qualifying.slice(0, 10).map((g) => ({
            account: g.account,
            intermediaries: g.intermediaries,
            gathered: g.sum.toString(),
            scattered: g.scattered.toString(),
            ratio: ratio(g.ratio),
          })),
          search_truncated: found.truncated,
        },
      },
    };
  },
});

async function ignoredSegment(ctx: SubjectContext, account: string, segments: readonly string[]): Promise<boolean> {
  if (segments.length === 0) return false;
  const holder = (await ctx.entity('account', account))?.data.holder_party_id;
  if (typeof holder !== 'string') return false;
  const segment = (await ctx.entity('party', holder))?.data.segment;
  return typeof segment === 'string' && segments.includes(segment);
}
