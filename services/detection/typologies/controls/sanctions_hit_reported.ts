// The customer's own screening reported a sanctions hit about the subject (its party, or the
// account itself). The service does not screen; it makes sure a reported hit is never lost, and
// keeps every movement of the subject after the hit in front of an analyst while the hit is recent.
//
// Rule, over (at - lookbackDays, at]:
// - a sanctions.hit_reported counts; so does a screening.status_changed whose outcome (or reason
//   code) is a confirmed match: a screening status moving to confirmed match is the same fact
//   reported as a status change. Other status changes (potential match, under review) are the
//   screening at work, not a hit.
// - a hit is confirmed when its outcome names a confirmed match or its customer_severity is one of
//   `confirmedSeverities`; cleared when its own outcome, or a later screening.status_changed about
//   the same subject (and the same external_ref, when both carry one), says the customer's review
//   dismissed it (false positive, cleared). A party sees its accounts' events: a false positive
//   cleared on one account says nothing of a match confirmed on another.
// - any counted event is a hit: critical (0.95) when one not cleared is confirmed, high (0.8, a
//   little more per further hit) when one not cleared remains, medium (0.45) when every one was
//   cleared — still shown, since a dismissed hit within the month is context an analyst needs,
//   but not escalated on the customer's own word that it was a false positive.
import { z } from 'zod';
import { formatMoney } from '../../framework/money-text.ts';
import type { ControlEventFact } from '../../framework/context.ts';
import { defineDetector, noHit, type DetectorOutcome } from '../../framework/detector.ts';
import { controlEventsFor, describeEvent, folded, foldedSet, linkedMovements } from './control-events.ts';
import { DAY_MS, evidenceIds, uniqueCapped, windowOf } from './evidence.ts';
import { roundScore, severityOf } from './scoring.ts';

const HIT = 'sanctions.hit_reported';
const STATUS = 'screening.status_changed';

const params = z.strictObject({
  lookbackDays: z.number().int().min(1).max(365).default(30),
  // Count a screening status change to a confirmed match as a hit.
  includeConfirmedScreening: z.boolean().default(true),
  confirmedOutcomes: z.array(z.string().min(1)).default(['confirmed', 'confirmed_match', 'true_match', 'true_positive', 'match_confirmed']),
  confirmedSeverities: z.array(z.string().min(1)).default(['critical', 'confirmed']),
  clearedOutcomes: z.array(z.string().min(1)).default(['cleared', 'false_positive', 'dismissed', 'no_match', 'not_a_match']),
});

type Standing = 'confirmed' | 'reported' | 'cleared';

const SCORES: Record<Standing, number> = { confirmed: 0.95, reported: 0.8, cleared: 0.45 };
const PER_FURTHER_HIT = 0.02;
// The latest movements after the hit that evidence lists and sums; beyond them the totals are
// a lower bound (said in the facts).
const AFTER_LIMIT = 200;
const SCORE_CAP: Record<Standing, number> = { confirmed: 1, reported: 0.88, cleared: 0.55 };

export const sanctionsHitReported = defineDetector({
  id: 'sanctions_hit_reported',
  typology: 'Sanctions hit reported by the customer',
  version: 1,
  subjects: ['party', 'account'],
  triggers: ['control_event', 'movement'],
  needs: [{ family: 'control_event' }],
  windows: ['30d'],
  params,
  async evaluate(ctx, p): Promise<DetectorOutcome> {
    const since = new Date(ctx.at.getTime() - p.lookbackDays * DAY_MS);
    const events = await controlEventsFor(ctx, since, [HIT, STATUS]);
    const confirmedOutcomes = foldedSet(p.confirmedOutcomes);
    const clearedOutcomes = foldedSet(p.clearedOutcomes);
    const confirmedSeverities = foldedSet(p.confirmedSeverities);
    const isConfirmedStatus = (e: ControlEventFact) =>
      e.type === STATUS && (confirmedOutcomes.has(folded(e.data.outcome) ?? '') || confirmedOutcomes.has(folded(e.data.reason_code) ?? ''));
    const isClearing = (e: ControlEventFact) => e.type === STATUS && clearedOutcomes.has(folded(e.data.outcome) ?? '');

    const hits = events.filter((e) => e.type === HIT || (p.includeConfirmedScreening && isConfirmedStatus(e)));
    if (hits.length === 0) return noHit();
    const clearings = events.filter(isClearing);
    const clears = (clearing: ControlEventFact, hit: ControlEventFact) =>
      clearing.occurredAt > hit.occurredAt &&
      clearing.subject.kind === hit.subject.kind &&
      clearing.subject.externalId === hit.subject.externalId &&
      (typeof clearing.data.external_ref !== 'string' || typeof hit.data.external_ref !== 'string' || clearing.data.external_ref === hit.data.external_ref);
    const standing = (hit: ControlEventFact): Standing => {
      if (clearedOutcomes.has(folded(hit.data.outcome) ?? '')) return 'cleared';
      if (clearings.some((c) => clears(c, hit))) return 'cleared';
      const confirmed = hit.type === STATUS || confirmedOutcomes.has(folded(hit.data.outcome) ?? '') || confirmedSeverities.has(folded(hit.data.customer_severity) ?? '');
      return confirmed ? 'confirmed' : 'reported';
    };
    const standings = hits.map(standing);
    const strongest: Standing = standings.includes('confirmed') ? 'confirmed' : standings.includes('reported') ? 'reported' : 'cleared';
    const standingHits = hits.filter((_, i) => standings[i] === strongest);
    const score = roundScore(Math.min(SCORE_CAP[strongest], SCORES[strongest] + PER_FURTHER_HIT * (standingHits.length - 1)));

    // What the subject did after it was reported: the movements an analyst must look at first.
    const firstHit = standingHits[0]!;
    const after = await ctx.activities(firstHit.occurredAt, { limit: AFTER_LIMIT });
    const sumOf = (direction: 'in' | 'out') => after.filter((a) => a.direction === direction).reduce((sum, a) => sum + (a.baseValue ?? 0n), 0n);
    const moneyIn = sumOf('in');
    const moneyOut = sumOf('out');

    const shown = [...hits, ...clearings].sort((a, b) => a.occurredAt.getTime() - b.occurredAt.getTime());
    const label = { confirmed: 'a confirmed match', reported: 'not confirmed as a match', cleared: 'since cleared by the customer' }[strongest];
    return {
      outcome: 'hit',
      score,
      severity: severityOf(score),
      summary:
        `The customer's screening reported ${hits.length} sanctions hit(s) in the last ${p.lookbackDays} days (${label}; first ${firstHit.externalId} at ${firstHit.occurredAt.toISOString()}); ` +
        `${after.length} movement(s) followed it, ${formatMoney(moneyOut, ctx.baseAsset)} out and ${formatMoney(moneyIn, ctx.baseAsset)} in.`,
      evidence: {
        movements: evidenceIds(ctx, [...linkedMovements(hits), ...after.map((a) => a.movementId)]),
        counterparties: uniqueCapped(after.map((a) => a.counterparty)),
        amounts: { total: (moneyIn + moneyOut).toString(), count: after.length, asset: ctx.baseAsset, in: moneyIn.toString(), out: moneyOut.toString() },
        window: windowOf(since, ctx.at),
        thresholds: [{ name: 'sanctions_hits_reported', threshold: 1, observed: hits.length }],
        facts: {
          standing: strongest,
          control_events: shown.map((e) => describeEvent(e, hits.includes(e) ? { standing: standing(e) } : { clears_earlier_hits: hits.some((hit) => clears(e, hit)) })),
          movements_after_first_hit: after.length,
          movements_after_first_hit_truncated: after.length >= AFTER_LIMIT,
        },
      },
    };
  },
});
