// The customer's controls keep stopping the subject: transfers failing, withdrawals blocked,
// velocity checks tripping, transfers retried again and again. One failure is ordinary (a typo,
// an empty balance); a run of them in a short time is someone probing the limits, or pushing
// money through by trial and error.
//
// Rule: count the control events of `types` about the subject (an account: itself and its holder;
// a party: itself and all its accounts) in (at - shortWindowHours, at] and in
// (at - longWindowDays, at]; a hit when either count reaches its minimum. The score starts at
// 0.45 (medium) at the minimum and grows by 0.25 each time the larger count/minimum ratio
// doubles, so twice the minimum is high; never critical (the customer's controls already acted).
// Businesses that send many transfers (merchants, payroll, marketplaces, agents, institutions)
// fail more often in absolute terms: their segment defaults ask for more.
import { z } from 'zod';
import { defineDetector, noHit, type DetectorOutcome, type ThresholdCrossed } from '../../framework/detector.ts';
import { controlEventsFor, describeEvent, linkedMovements } from './control-events.ts';
import { DAY_MS, HOUR_MS, evidenceIds, windowOf } from './evidence.ts';
import { scoreForRatio, severityOf } from './scoring.ts';

const FAILURE_TYPES = ['transfer.failed', 'withdrawal.blocked', 'velocity_check.failed', 'transfer.retried_repeatedly'] as const;

const params = z.strictObject({
  types: z.array(z.enum(FAILURE_TYPES)).min(1).default([...FAILURE_TYPES]),
  shortWindowHours: z.number().int().min(1).max(168).default(24),
  shortMinCount: z.number().int().min(2).default(3),
  longWindowDays: z.number().int().min(1).max(90).default(7),
  longMinCount: z.number().int().min(2).default(6),
});

const BUSY = { shortMinCount: 10, longMinCount: 30 };

export const repeatedControlFailures = defineDetector({
  id: 'repeated_control_failures',
  typology: 'Repeated control failures',
  version: 1,
  subjects: ['party', 'account'],
  triggers: ['control_event'],
  needs: [{ family: 'control_event' }],
  windows: ['24h', '7d'],
  params,
  segmentDefaults: { merchant: BUSY, payroll: BUSY, marketplace: BUSY, remittance_agent: BUSY, cash_agent: BUSY, financial_institution: BUSY },
  async evaluate(ctx, p): Promise<DetectorOutcome> {
    const shortFrom = new Date(ctx.at.getTime() - p.shortWindowHours * HOUR_MS);
    const longFrom = new Date(ctx.at.getTime() - p.longWindowDays * DAY_MS);
    const since = shortFrom < longFrom ? shortFrom : longFrom;
    const events = await controlEventsFor(ctx, since, p.types);
    const inShort = events.filter((e) => e.occurredAt > shortFrom);
    const inLong = events.filter((e) => e.occurredAt > longFrom);

    const thresholds: ThresholdCrossed[] = [];
    if (inShort.length >= p.shortMinCount) thresholds.push({ name: `control_failures_${p.shortWindowHours}h`, threshold: p.shortMinCount, observed: inShort.length });
    if (inLong.length >= p.longMinCount) thresholds.push({ name: `control_failures_${p.longWindowDays}d`, threshold: p.longMinCount, observed: inLong.length });
    if (thresholds.length === 0) return noHit();

    // The wider of the windows crossed is shown, so the analyst sees the whole run.
    const longCrossed = inLong.length >= p.longMinCount;
    const shownFrom = longCrossed ? (longFrom < shortFrom ? longFrom : shortFrom) : shortFrom;
    const shown = events.filter((e) => e.occurredAt > shownFrom);
    const ratio = Math.max(inShort.length / p.shortMinCount, inLong.length / p.longMinCount);
    const score = scoreForRatio(ratio, 0.45, 0.25, 0.85);

    // Control events carry amounts in any asset; only those already in the base asset are summed.
    const inBase = shown.flatMap((e) => {
      const amount = e.data.amount as { asset?: unknown; value?: unknown } | undefined;
      return amount?.asset === ctx.baseAsset && typeof amount.value === 'string' ? [amount.value] : [];
    });
    const total = inBase.reduce((sum, value) => sum + BigInt(value), 0n);
    const byType = Object.fromEntries(p.types.map((type) => [type, shown.filter((e) => e.type === type).length]).filter(([, n]) => n !== 0));
    const crossed = thresholds.map((t) => `${t.observed} in ${t.name.replace('control_failures_', '')} (minimum ${t.threshold})`).join(', ');
    return {
      outcome: 'hit',
      score,
      severity: severityOf(score),
      summary: `The customer's controls failed or blocked the subject ${shown.length} time(s): ${crossed}; by type ${Object.entries(byType).map(([t, n]) => `${t} ${n}`).join(', ')}.`,
      evidence: {
        movements: evidenceIds(ctx, linkedMovements(shown)),
        counterparties: [],
        amounts: { total: total.toString(), count: shown.length, asset: ctx.baseAsset },
        window: windowOf(shownFrom, ctx.at),
        thresholds,
        facts: {
          control_events: shown.map((e) => describeEvent(e)),
          by_type: byType,
          amounts_not_in_base_asset: shown.filter((e) => e.data.amount !== undefined).length - inBase.length,
        },
      },
    };
  },
});
