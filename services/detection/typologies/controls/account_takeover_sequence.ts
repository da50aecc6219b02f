// Account takeover: a new device, a password reset and a new beneficiary (any order), then a
// large transfer out. Each step alone is everyday life; all three in a few days, followed by
// money leaving, is the classic sequence of someone who got into the customer's account.
//
// Rule, over (at - windowHours, at]: take the first device.changed, password.reset and
// beneficiary.added in the window (all three required); the sequence is complete at the latest
// of the three. Transfers out of the party (its own accounts between themselves left out)
// strictly after that instant and at least the transfer threshold make it a hit: minTransfer,
// or — when the party has minBaselineDays of history — baselineMultiple × its mean daily
// outflow if that is lower, but never under minTransferWithBaseline. The whole sequence thus
// falls within the window and the transfer always comes after the three control events in
// event time: it fires on the movement, never on a control event (see index.ts).
// Score: 0.6 (medium) at the threshold, +0.1 per doubling of the largest transfer over it (at
// most +0.2), +0.1 when that transfer goes to a counterparty first seen after the sequence
// started, +0.1 for an auth.suspicious_login and +0.1 for a burst of auth.failed (at least
// authFailedBurst) before the transfer; at most 0.89 (high).
// When no priced transfer qualifies but some outflow after the sequence had no base-asset
// amount (no FX rate), the answer is insufficient_data.
import { z } from 'zod';
import type { ControlEventFact, SubjectContext } from '../../framework/context.ts';
import { defineDetector, noHit, nonResult, type DetectorOutcome, type ThresholdCrossed } from '../../framework/detector.ts';
import { notAbove } from '../../framework/parameter-rules.ts';
import { controlEventsFor, describeEvent } from './control-events.ts';
import { HOUR_MS, evidenceIds, uniqueCapped, windowOf } from './evidence.ts';
import { baselineOutflow, outflowsAfter, timesMultiple, type DailyOutflow } from './outflows.ts';
import { moneyRatio, roundScore, severityOf } from './scoring.ts';

const SEQUENCE = ['device.changed', 'password.reset', 'beneficiary.added'] as const;
const SUSPICIOUS_LOGIN = 'auth.suspicious_login';
const AUTH_FAILED = 'auth.failed';

const BASE_SCORE = 0.6;
const PER_DOUBLING = 0.1;
const MAX_AMOUNT_BONUS = 0.2;
const SIGNAL_BONUS = 0.1;
const SCORE_CAP = 0.89;

const money = z.string().regex(/^\d+$/);
const params = z.strictObject({
  windowHours: z.number().int().min(1).max(720).default(72),
  minTransfer: money.default('100000'),
  baselineMultiple: z.number().min(1).max(100).default(5),
  minTransferWithBaseline: money.default('20000'),
  baselineDays: z.number().int().min(7).max(365).default(90),
  minBaselineDays: z.number().int().min(1).max(365).default(14),
  authFailedBurst: z.number().int().min(1).default(3),
});

export const accountTakeoverSequence = defineDetector({
  id: 'account_takeover_sequence',
  typology: 'Account takeover sequence',
  version: 1,
  // Credentials and devices belong to the customer (the party), and the thief may use any of
  // its accounts: an account subject would repeat the party's alert.
  subjects: ['party'],
  triggers: ['movement'],
  needs: [{ family: 'control_event' }, { family: 'movement' }],
  windows: ['7d', '90d'],
  params,
  rules: [notAbove('minBaselineDays', 'baselineDays')],
  async evaluate(ctx, p): Promise<DetectorOutcome> {
    const since = new Date(ctx.at.getTime() - p.windowHours * HOUR_MS);
    const events = await controlEventsFor(ctx, since, [...SEQUENCE, SUSPICIOUS_LOGIN, AUTH_FAILED]);
    const steps = SEQUENCE.map((type) => events.find((e) => e.type === type));
    if (steps.some((step) => step === undefined)) return noHit();
    const sequence = (steps as ControlEventFact[]).sort((a, b) => a.occurredAt.getTime() - b.occurredAt.getTime());
    const started = sequence[0]!;
    const completed = sequence[sequence.length - 1]!;

    const outflow = await outflowsAfter(ctx, completed.occurredAt);
    const baseline = await baselineOutflow(ctx, p.baselineDays, p.minBaselineDays);
    const limit = transferLimit(BigInt(p.minTransfer), baseline, p.baselineMultiple, BigInt(p.minTransferWithBaseline));
    const large = outflow.priced.filter((a) => a.baseValue! >= limit);
    if (large.length === 0) {
      return outflow.unpriced > 0
        ? nonResult('insufficient_data', 'the account-takeover sequence is complete and outflow followed, but some of it has no base-asset amount (no FX rate)')
        : noHit();
    }

    const largest = large[0]!;
    const lastTransferAt = new Date(Math.max(...large.map((a) => a.occurredAt.getTime())));
    const before = (e: ControlEventFact) => e.occurredAt < lastTransferAt;
    const suspicious = events.filter((e) => e.type === SUSPICIOUS_LOGIN && before(e));
    const failed = events.filter((e) => e.type === AUTH_FAILED && before(e));
    const newCounterparty = await firstSeenSince(ctx, largest.counterparty, started.occurredAt);

    const ratio = moneyRatio(largest.baseValue!, limit);
    const amountBonus = Math.min(MAX_AMOUNT_BONUS, ratio > 1 ? Math.log2(ratio) * PER_DOUBLING : 0);
    const signals = [newCounterparty, suspicious.length > 0, failed.length >= p.authFailedBurst].filter(Boolean).length;
    const score = roundScore(Math.min(SCORE_CAP, BASE_SCORE + amountBonus + SIGNAL_BONUS * signals));

    const total = large.reduce((sum, a) => sum + a.baseValue!, 0n);
    const thresholds: ThresholdCrossed[] = [
      { name: 'sequence_steps', threshold: SEQUENCE.length, observed: SEQUENCE.length },
      { name: 'transfer_amount', threshold: limit.toString(), observed: largest.baseValue!.toString() },
    ];
    if (failed.length >= p.authFailedBurst) thresholds.push({ name: 'auth_failed_burst', threshold: p.authFailedBurst, observed: failed.length });
    const shown = [...sequence, ...suspicious, ...failed].sort((a, b) => a.occurredAt.getTime() - b.occurredAt.getTime());
    const extras = [newCounterparty && 'to a new counterparty', suspicious.length > 0 && `${suspicious.length} suspicious login(s)`, failed.length >= p.authFailedBurst && `${failed.length} failed logins`].filter(Boolean);
    return {
      outcome: 'hit',
      score,
      severity: severityOf(score),
      summary:
        `${sequence.map((e) => `${e.type} ${e.externalId}`).join(', ')} within ${p.windowHours}h, then ${large.length} transfer(s) out of at least ${limit} ${ctx.baseAsset} minor units ` +
        `(largest ${largest.movementId}: ${largest.baseValue})${extras.length ? `; ${extras.join(', ')}` : ''}.`,
      evidence: {
        movements: evidenceIds(ctx, large.map((a) => a.movementId)),
        counterparties: uniqueCapped(large.map((a) => a.counterparty)),
        amounts: { total: total.toString(), count: large.length, asset: ctx.baseAsset, out: total.toString() },
        window: windowOf(since, ctx.at),
        thresholds,
        ...(baseline ? { baseline: { days: baseline.days, mean: baseline.mean.toString(), stddev: baseline.stddev.toString(), observed: largest.baseValue!.toString(), metric: 'daily outgoing sum' } } : {}),
        facts: {
          control_events: shown.map((e) => describeEvent(e, sequence.includes(e) ? { step: true } : {})),
          sequence_completed_at: completed.occurredAt.toISOString(),
          new_counterparty: newCounterparty,
          unpriced_outflows: outflow.unpriced,
        },
      },
    };
  },
});

// The smallest transfer that counts: minTransfer, lowered to baselineMultiple × the party's
// normal daily outflow when that is smaller (a customer that rarely sends money), but never
// under the floor (small transfers are not worth an alert whatever the history).
function transferLimit(minTransfer: bigint, baseline: DailyOutflow | null, multiple: number, floor: bigint): bigint {
  if (!baseline) return minTransfer;
  const fromBaseline = timesMultiple(baseline.mean, multiple);
  const lowered = fromBaseline > floor ? fromBaseline : floor;
  return lowered < minTransfer ? lowered : minTransfer;
}

// The money went to someone the party had never dealt with before the sequence started.
async function firstSeenSince(ctx: SubjectContext, counterparty: string | null, since: Date): Promise<boolean> {
  if (!counterparty) return false;
  const history = await ctx.counterpartyHistory(counterparty);
  return history !== null && history.firstSeenAt > since;
}
