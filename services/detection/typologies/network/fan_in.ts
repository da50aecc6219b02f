// Fan-in (smurfing, collection accounts): many accounts the subject never dealt with before pay
// into it within a few days, in like-sized pieces or to a material total, well above its normal
// inbound traffic; the money leaving again soon after aggravates it. The rule and its score are
// in fan-judge.ts (shared with fan_out, its mirror).
import { z } from 'zod';
import { defineDetector } from '../../framework/detector.ts';
import { moneyParam } from './evidence.ts';
import { judgeFan } from './fan-judge.ts';

const params = z.strictObject({
  windowDays: z.number().int().min(1).max(90).default(7),
  // Distinct new sending accounts (of other parties) in the window.
  minNewSenders: z.number().int().min(2).default(8),
  // Share of the window's distinct senders that must be new: regular payers are not smurfs.
  minNewShare: z.number().min(0).max(1).default(0.6),
  // Like-sized pieces: coefficient of variation of the new senders' amounts at most this, with
  // at least minTotalSimilar in all...
  maxAmountCv: z.number().min(0).default(0.35),
  minTotalSimilar: moneyParam('50000'),
  // ...or, whatever the amounts, a material total.
  minTotal: moneyParam('500000'),
  // Outflow after the first new inflow, as a share of that inflow, that raises severity.
  outflowRatio: z.number().min(0).default(0.5),
  // The window's inbound movements must be at least this many times the account's daily normal
  // (over its last 90 days) scaled to the window, when it has baselineMinDays of history; 0: off.
  baselineMultiple: z.number().min(0).default(2),
  baselineMinDays: z.number().int().min(1).default(30),
});

export const fanIn = defineDetector({
  id: 'fan_in',
  typology: 'Fan-in (smurfing)',
  version: 1,
  subjects: ['account'],
  triggers: ['movement'],
  needs: [{ family: 'movement' }],
  windows: ['7d', '90d'],
  params,
  // Businesses that collect from the public meet new payers every day: only a far larger crowd
  // of them is unusual.
  segmentDefaults: {
    merchant: { minNewSenders: 100, minNewShare: 0.8 },
    marketplace: { minNewSenders: 100, minNewShare: 0.8 },
    financial_institution: { minNewSenders: 200, minNewShare: 0.8 },
    remittance_agent: { minNewSenders: 40 },
    cash_agent: { minNewSenders: 40 },
  },
  evaluate: (ctx, p) =>
    judgeFan(ctx, 'in', {
      windowDays: p.windowDays,
      minNew: p.minNewSenders,
      minNewShare: p.minNewShare,
      maxAmountCv: p.maxAmountCv,
      minTotalSimilar: BigInt(p.minTotalSimilar),
      minTotal: BigInt(p.minTotal),
      followOnRatio: p.outflowRatio,
      baselineMultiple: p.baselineMultiple,
      baselineMinDays: p.baselineMinDays,
    }),
});
