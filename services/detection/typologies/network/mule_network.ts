// Money-mule account: several mule indicators on one account, each weak alone, combined.
//   young_account     opened within youngAccountDays of the evaluation
//   unrelated_fan_in  at least minNewSenders accounts of other parties, never seen before the
//                     window, paid in (most of the window's senders new)
//   pass_through      most of a material inflow left again within hours or days
//   shares_with_flagged  the holder shares an identifier, device or ip with a party that has an
//                     open alert
//   deals_with_flagged   at least minLinkedCounterparties of the parties on the two flows above
//                     (the new senders, the payees the money went on to) have an open alert
// A hit needs minIndicators of them, at least one of which is context (the account's age or its
// ties to flagged parties): the two flow indicators alone describe any busy account that is paid
// by people it does not know and pays on, which is most of ordinary traffic in a random payment
// network; what makes a mule is who it is tied to. A young account alone is common, so it weighs half.
//
// Score: 0.25 per indicator (0.125 for a young account) minus 0.02: a young account and one
// other is low; two strong ones medium; three high; four or more critical.
import { z } from 'zod';
import type { ThresholdCrossed } from '../../framework/detector.ts';
import { defineDetector, nonResult, noHit } from '../../framework/detector.ts';
import type { SubjectContext } from '../../framework/context.ts';
import { accountKey, byRelevance, listed, moneyParam, percent, ratio, spanOfDays, windowOf, type Span } from './evidence.ts';
import { readFan, type FanSide } from './fan.ts';
import { findPassThrough, type PassThrough } from './pass-through-flow.ts';
import { finalScore, severityOf } from './scoring.ts';

const DAY_MS = 86_400_000;

const params = z.strictObject({
  minIndicators: z.number().int().min(1).max(4).default(2),
  youngAccountDays: z.number().int().min(1).default(90),
  fanInWindowDays: z.number().int().min(1).max(90).default(7),
  minNewSenders: z.number().int().min(2).default(4),
  minNewSenderShare: z.number().min(0).max(1).default(0.6),
  passThroughHours: z.array(z.number().int().min(1).max(2160)).min(1).max(4).default([48, 168]),
  passThroughRatio: z.number().min(0).default(0.8),
  passThroughMaxRatio: z.number().min(0).default(1.25),
  passThroughMinInflow: moneyParam('100000'),
  sharedAttributeLimit: z.number().int().min(1).max(200).default(50),
  // Distinct parties with an open alert among the flows' counterparties (chosen cross-dataset,
  // docs/decisions/0026).
  minLinkedCounterparties: z.number().int().min(1).default(3),
});

type Indicator = 'young_account' | 'unrelated_fan_in' | 'pass_through' | 'shares_with_flagged' | 'deals_with_flagged';

// The indicators that say who the account is rather than how much flows through it.
const CONTEXT: ReadonlySet<Indicator> = new Set(['young_account', 'shares_with_flagged', 'deals_with_flagged']);
// Counterparties of the flows whose holders are looked up, most relevant first.
const LINKED_CHECKED = 50;

interface Flagged {
  via: { kind: string; key: string };
  parties: string[];
}

export const muleNetwork = defineDetector({
  id: 'mule_network',
  typology: 'Money-mule account',
  version: 1,
  subjects: ['account'],
  triggers: ['movement'],
  needs: [{ family: 'account' }, { family: 'movement' }],
  windows: ['7d', '90d'],
  params,
  // Institutions and agents see many unrelated payers and pass money on by design: they need
  // a third indicator.
  segmentDefaults: {
    financial_institution: { minIndicators: 3 },
    remittance_agent: { minIndicators: 3 },
    cash_agent: { minIndicators: 3 },
    payroll: { minIndicators: 3 },
    merchant: { minIndicators: 3 },
    marketplace: { minIndicators: 3 },
  },
  async evaluate(ctx, p) {
    const fired = new Set<Indicator>();
    const thresholds: ThresholdCrossed[] = [];

    const ageDays = await accountAgeDays(ctx);
    if (ageDays !== null && ageDays < p.youngAccountDays) {
      fired.add('young_account');
      thresholds.push({ name: 'account_age_days', threshold: p.youngAccountDays, observed: Math.floor(ageDays) });
    }

    const fan = await readFan(ctx, 'in', p.fanInWindowDays, p.minNewSenders);
    const fanSide: FanSide | null = fan.kind === 'read' && fan.side.fresh.length / fan.side.counterparties.length >= p.minNewSenderShare ? fan.side : null;
    if (fanSide) {
      fired.add('unrelated_fan_in');
      thresholds.push({ name: 'new_senders', threshold: p.minNewSenders, observed: fanSide.fresh.length });
      thresholds.push({ name: 'new_sender_share', threshold: p.minNewSenderShare, observed: ratio(fanSide.fresh.length / fanSide.counterparties.length) });
    }

    // No baseline comparison here: the other indicators already say the account is unusual.
    const pass = await findPassThrough(ctx, {
      windowHours: p.passThroughHours,
      minRatio: p.passThroughRatio,
      maxRatio: p.passThroughMaxRatio,
      minInflow: BigInt(p.passThroughMinInflow),
      baselineMultiple: 0,
      baselineMinDays: 1,
    });
    if (pass) {
      fired.add('pass_through');
      thresholds.push({ name: 'pass_through_inflow', threshold: p.passThroughMinInflow, observed: pass.inflow.toString() });
      thresholds.push({ name: 'pass_through_ratio', threshold: p.passThroughRatio, observed: ratio(pass.ratio) });
    }

    // The context indicators are the dearest (network reads and alert lookups): each is skipped
    // when even with it the account could not reach minIndicators (the flows' one needs a flow).
    const flows = fanSide || pass ? 1 : 0;
    const links = fired.size + 1 + flows >= p.minIndicators ? await flaggedLinks(ctx, p.sharedAttributeLimit) : { flagged: [], cutShort: false };
    const flagged = links.flagged;
    if (flagged.length > 0) {
      fired.add('shares_with_flagged');
      thresholds.push({ name: 'flagged_linked_parties', threshold: 1, observed: new Set(flagged.flatMap((f) => f.parties)).size });
    }
    const flowParties = flows > 0 && fired.size + 1 >= p.minIndicators ? await flaggedCounterparties(ctx, fanSide, pass) : [];
    if (flowParties.length >= p.minLinkedCounterparties) {
      fired.add('deals_with_flagged');
      thresholds.push({ name: 'linked_counterparties', threshold: p.minLinkedCounterparties, observed: flowParties.length });
    }

    if (fired.size < p.minIndicators || ![...fired].some((indicator) => CONTEXT.has(indicator))) {
      // A network read cut short found nothing, which is not "nothing there": when the indicators
      // it could have given would reach the minimum, the account was not judged.
      const unread = (fan.kind === 'unreadable' ? 1 : 0) + (links.cutShort ? 1 : 0);
      return unread > 0 && fired.size + unread >= p.minIndicators
        ? nonResult('insufficient_data', 'a network read of the account (its senders or what its holder shares) was cut short before it returned anything')
        : noHit();
    }
    thresholds.push({ name: 'indicators', threshold: p.minIndicators, observed: fired.size });
    const weight = [...fired].reduce((sum, indicator) => sum + (indicator === 'young_account' ? 0.5 : 1), 0);
    const score = finalScore(0.25 * weight - 0.02);
    const span = spanOf(ctx, p, fanSide, pass);
    // The fan-in's inflows are the pass-through's too: each movement once, in the listing and the count.
    const cited = [...(fanSide?.movements ?? []), ...(pass ? [...pass.ins, ...pass.outs] : [])];
    const movements = [...new Map(cited.map((m) => [m.movementId, m])).values()].sort(byRelevance);
    const inflow = fanSide?.sum ?? pass?.inflow ?? 0n;
    const indicators = [...fired];
    return {
      outcome: 'hit',
      score,
      severity: severityOf(score),
      summary:
        `${indicators.length} money-mule indicators on the account (threshold ${p.minIndicators}): ${indicators.map(describe(ageDays, fanSide, pass, flagged, flowParties)).join('; ')}.`,
      evidence: {
        movements: listed(movements.map((m) => m.movementId)),
        counterparties: listed([
          ...flagged.flatMap((f) => f.parties.map((party) => `party:${party}`)),
          ...(fired.has('deals_with_flagged') ? flowParties.map((party) => `party:${party}`) : []),
          ...(fanSide?.fresh.map((c) => accountKey(c.account)) ?? []),
          ...(pass?.outs.flatMap((a) => (a.counterparty === null ? [] : [a.counterparty])) ?? []),
        ]),
        amounts: {
          total: inflow.toString(),
          count: movements.length,
          asset: ctx.baseAsset,
          in: inflow.toString(),
          ...(pass ? { out: pass.outflow.toString() } : {}),
        },
        window: windowOf(span),
        thresholds,
        facts: {
          indicators,
          ...(fanSide ? { new_senders: fanSide.fresh.length, senders: fanSide.counterparties.length } : {}),
          ...(pass ? { pass_through: { hours: pass.flowHours, inflow: pass.inflow.toString(), outflow: pass.outflow.toString(), ratio: ratio(pass.ratio) } } : {}),
          ...(flagged.length > 0 ? { shared_with_flagged: flagged } : {}),
          ...(fired.has('deals_with_flagged') ? { flagged_counterparties: flowParties } : {}),
        },
      },
    };
  },
});

// Days from the account's opening to the evaluation; an opening after it (data corrected
// later) counts as brand new. Null when the account does not say when it was opened.
async function accountAgeDays(ctx: SubjectContext): Promise<number | null> {
  const opened = (await ctx.account())?.data.opened_at;
  if (typeof opened !== 'string') return null;
  const at = Date.parse(opened);
  if (Number.isNaN(at)) return null;
  return Math.max(0, (ctx.at.getTime() - at) / DAY_MS);
}

// The identifiers, devices and ips the holder shares with parties that have an open alert.
// cutShort: the read ran out of its budget before it returned anything.
async function flaggedLinks(ctx: SubjectContext, limit: number): Promise<{ flagged: Flagged[]; cutShort: boolean }> {
  const self = await ctx.partyId();
  const { shared, truncated } = await ctx.sharedAttributes(limit);
  const cutShort = truncated && shared.length === 0;
  const others = [...new Set(shared.flatMap((s) => s.parties))].filter((party) => party !== self);
  if (others.length === 0) return { flagged: [], cutShort };
  const flagged = new Set(await ctx.flaggedParties(others));
  return {
    flagged: shared.map((s) => ({ via: { kind: s.via.kind, key: s.via.key }, parties: s.parties.filter((party) => flagged.has(party)) })).filter((s) => s.parties.length > 0),
    cutShort,
  };
}

// The parties with an open alert that hold the accounts on the flows: the new senders of the fan-in
// and the payees the pass-through went on to. Sorted.
async function flaggedCounterparties(ctx: SubjectContext, fan: FanSide | null, pass: PassThrough | null): Promise<string[]> {
  const accounts = [
    ...(fan?.fresh.map((c) => c.account) ?? []),
    ...(pass?.ins ?? []).concat(pass?.outs ?? []).flatMap((a) => (a.counterparty?.startsWith('account:') ? [a.counterparty.slice('account:'.length)] : [])),
  ];
  const unique = [...new Set(accounts)].filter((account) => account !== ctx.subject.id).slice(0, LINKED_CHECKED);
  const self = await ctx.partyId();
  const holders = await Promise.all(unique.map(async (account) => (await ctx.entity('account', account))?.data.holder_party_id));
  const parties = [...new Set(holders.filter((h): h is string => typeof h === 'string' && h !== self))];
  return (await ctx.flaggedParties(parties)).sort();
}

// The evidence window: the widest of the windows the fired indicators looked at.
function spanOf(ctx: SubjectContext, p: { fanInWindowDays: number }, fan: FanSide | null, pass: PassThrough | null): Span {
  const starts = [fan?.span.from, pass?.span.from].filter((d): d is Date => d !== undefined);
  if (starts.length === 0) return spanOfDays(ctx, p.fanInWindowDays);
  return { from: new Date(Math.min(...starts.map((d) => d.getTime()))), to: ctx.at };
}

function describe(ageDays: number | null, fan: FanSide | null, pass: PassThrough | null, flagged: Flagged[], flowParties: string[]) {
  return (indicator: Indicator): string => {
    switch (indicator) {
      case 'young_account':
        return `account opened ${Math.floor(ageDays ?? 0)} days ago`;
      case 'unrelated_fan_in':
        return `${fan!.fresh.length} new unrelated senders in ${Math.round((fan!.span.to.getTime() - fan!.span.from.getTime()) / DAY_MS)} days`;
      case 'pass_through':
        return `${percent(pass!.ratio)} of the inflow left again within ${pass!.hours} hours`;
      case 'shares_with_flagged':
        return `the holder shares ${flagged.length} identifier${flagged.length === 1 ? '' : 's'}, device${flagged.length === 1 ? '' : 's'} or ip${flagged.length === 1 ? '' : 's'} with a party under an open alert`;
      case 'deals_with_flagged':
        return `${flowParties.length} of the parties it was paid by or paid on to are under an open alert`;
    }
  };
}
