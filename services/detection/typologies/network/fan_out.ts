// Fan-out (dispersal): the subject pays many accounts it never paid before within a few days, in
// like-sized pieces or to a material total, well above its normal outbound traffic; fresh inflow
// just before funding the payouts aggravates it. The rule and its score are in fan-judge.ts
// (shared with fan_in, its mirror). Payroll pays the same people every month, so only its first
// run meets new receivers; its segment still gets a higher count.
import { z } from 'zod';
import { defineDetector } from '../../framework/detector.ts';
import { moneyParam } from './evidence.ts';
import { judgeFan } from './fan-judge.ts';

const params = z.strictObject({
  windowDays: z.number().int().min(1).max(90).default(7),
  // Distinct new receiving accounts (of other parties) in the window.
  minNewReceivers: z.number().int().min(2).default(8),
  // Share of the window's distinct receivers that must be new: regular payees are not dispersal.
  minNewShare: z.number().min(0).max(1).default(0.6),
  // Like-sized pieces: coefficient of variation of the amounts paid to new receivers at most
  // this, with at least minTotalSimilar in all...
  maxAmountCv: z.number().min(0).default(0.35),
  minTotalSimilar: moneyParam('50000'),
  // ...or, whatever the amounts, a material total.
  minTotal: moneyParam('500000'),
  // Inflow before the last payout, as a share of the payouts, that raises severity.
  fundingRatio: z.number().min(0).default(0.5),
  // The window's outbound movements must be at least this many times the account's daily normal
  // (over its last 90 days) scaled to the window, when it has baselineMinDays of history; 0: off.
  baselineMultiple: z.number().min(0).default(2),
  baselineMinDays: z.number().int().min(1).default(30),
});

export const fanOut = defineDetector({
  id: 'fan_out',
  typology: 'Fan-out (dispersal)',
  version: 1,
  subjects: ['account'],
  triggers: ['movement'],
  needs: [{ family: 'movement' }],
  windows: ['7d', '90d'],
  params,
  // Accounts whose business is paying many people: payroll, marketplaces paying sellers,
  // remittance and cash agents, institutions.
  segmentDefaults: {
    payroll: { minNewReceivers: 200, minNewShare: 0.8 },
    marketplace: { minNewReceivers: 100, minNewShare: 0.8 },
    merchant: { minNewReceivers: 50 },
    financial_institution: { minNewReceivers: 200, minNewShare: 0.8 },
    remittance_agent: { minNewReceivers: 40 },
    cash_agent: { minNewReceivers: 40 },
  },
  evaluate: (ctx, p) =>
    judgeFan(ctx, 'out', {
      windowDays: p.windowDays,
      minNew: p.minNewReceivers,
      minNewShare: p.minNewShare,
      maxAmountCv: p.maxAmountCv,
      minTotalSimilar: BigInt(p.minTotalSimilar),
      minTotal: BigInt(p.minTotal),
      followOnRatio: p.fundingRatio,
      baselineMultiple: p.baselineMultiple,
      baselineMinDays: p.baselineMinDays,
    }),
});
