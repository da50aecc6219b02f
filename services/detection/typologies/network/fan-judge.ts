// The rule fan_in and fan_out share (they are mirrors): many new counterparties in one direction
// inside a window, most of the counterparties new, like-sized amounts or a material total, more
// than the account's normal traffic, and the money moving on (fan-in) or freshly funded
// (fan-out) as an aggravating fact.
//
// Score: 0.45 at the count threshold (medium); +0.15 per doubling of the new counterparties
// (at most +0.45); +0.15 when the follow-on flow reaches its ratio; +0.05 when the amounts are
// both alike and material. So twice the threshold with money moving on is high, and critical
// needs about four times the threshold with the follow-on flow, or eight times without.
import type { DetectorOutcome, ThresholdCrossed } from '../../framework/detector.ts';
import { nonResult, noHit } from '../../framework/detector.ts';
import type { SubjectContext } from '../../framework/context.ts';
import { compareWithBaseline } from './baseline.ts';
import { formatMoney } from '../../framework/money-text.ts';
import { accountKey, listed, moneyRatio, percent, ratio, windowOf } from './evidence.ts';
import { amountsQualify, followOn, readFan } from './fan.ts';
import { excess, finalScore, severityOf } from './scoring.ts';

const DAY_MS = 86_400_000;
// Of the 50 movements listed, how many the fan itself may take before the follow-on flow.
const FAN_LISTED = 40;

export interface FanCriteria {
  windowDays: number;
  minNew: number;
  minNewShare: number;
  maxAmountCv: number;
  minTotalSimilar: bigint;
  minTotal: bigint;
  followOnRatio: number;
  baselineMultiple: number;
  baselineMinDays: number;
}

const WORDS = {
  in: { who: 'senders', new: 'new_senders', share: 'new_sender_share', follow: 'outflow_after_ratio', followText: 'forwarded afterwards' },
  out: { who: 'receivers', new: 'new_receivers', share: 'new_receiver_share', follow: 'funding_before_ratio', followText: 'funded just before' },
} as const;

export async function judgeFan(ctx: SubjectContext, direction: 'in' | 'out', criteria: FanCriteria): Promise<DetectorOutcome> {
  const words = WORDS[direction];
  const read = await readFan(ctx, direction, criteria.windowDays, criteria.minNew);
  if (read.kind === 'unreadable') return nonResult('insufficient_data', `the network read of the account's ${words.who} was cut short before it returned anything`);
  if (read.kind === 'below') return noHit();
  const side = read.side;
  const share = side.fresh.length / side.counterparties.length;
  if (share < criteria.minNewShare) return noHit();
  const amounts = amountsQualify(side, criteria);
  if (!amounts.similar && !amounts.material) return noHit();
  const windowMs = criteria.windowDays * DAY_MS;
  const baseline = await compareWithBaseline(ctx, direction, windowMs, { count: side.activities.length }, {
    multiple: criteria.baselineMultiple,
    minDays: criteria.baselineMinDays,
  });
  if (baseline.compared && baseline.usual) return noHit();

  const follow = await followOn(ctx, side);
  const followRatio = side.sum > 0n ? moneyRatio(follow.sum, side.sum) : 0;
  const followed = side.sum > 0n && followRatio >= criteria.followOnRatio;

  const thresholds: ThresholdCrossed[] = [
    { name: words.new, threshold: criteria.minNew, observed: side.fresh.length },
    { name: words.share, threshold: criteria.minNewShare, observed: ratio(share) },
  ];
  if (amounts.similar) {
    thresholds.push({ name: 'amount_cv', threshold: criteria.maxAmountCv, observed: ratio(side.amountCv!) });
    thresholds.push({ name: 'total_similar', threshold: criteria.minTotalSimilar.toString(), observed: side.sum.toString() });
  }
  if (amounts.material) thresholds.push({ name: 'total', threshold: criteria.minTotal.toString(), observed: side.sum.toString() });
  if (baseline.compared) thresholds.push(baseline.threshold);
  if (followed) thresholds.push({ name: words.follow, threshold: criteria.followOnRatio, observed: ratio(followRatio) });

  const score = finalScore(
    0.45 + excess(side.fresh.length, criteria.minNew, 0.15, 0.45) + (followed ? 0.15 : 0) + (amounts.similar && amounts.material ? 0.05 : 0),
  );
  const fanIds = side.movements.map((m) => m.movementId);
  const total = formatMoney(side.sum, ctx.baseAsset);
  const span = windowOf(side.span);
  const amountText = amounts.similar ? `like-sized amounts (variation ${percent(side.amountCv!)})` : `a material total`;
  return {
    outcome: 'hit',
    score,
    severity: severityOf(score),
    summary:
      `${side.fresh.length} new ${words.who} (threshold ${criteria.minNew}, ${percent(share)} of ${side.counterparties.length}) ` +
      `${direction === 'in' ? 'paid into' : 'were paid by'} the account in ${criteria.windowDays} days: ${side.count} movements, ${total}, ${amountText}` +
      (followed ? `; ${percent(followRatio)} of it ${words.followText}.` : '.'),
    evidence: {
      movements: listed([...fanIds.slice(0, FAN_LISTED), ...follow.movements.map((m) => m.movementId), ...fanIds.slice(FAN_LISTED)]),
      counterparties: listed(side.fresh.map((c) => accountKey(c.account))),
      amounts: {
        total: side.sum.toString(),
        count: side.count,
        asset: ctx.baseAsset,
        in: (direction === 'in' ? side.sum : follow.sum).toString(),
        out: (direction === 'in' ? follow.sum : side.sum).toString(),
      },
      window: span,
      thresholds,
      ...(baseline.compared ? { baseline: baseline.evidence } : {}),
      facts: {
        distinct_counterparties: side.counterparties.length,
        new_counterparties: side.fresh.length,
        counterparties_truncated: side.truncated,
        amount_cv: side.amountCv === null ? null : ratio(side.amountCv),
        follow_on: { sum: follow.sum.toString(), count: follow.movements.length, ratio: ratio(followRatio) },
      },
    },
  };
}
