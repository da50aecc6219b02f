// High-risk geography: money to or from a jurisdiction on the operator's list, over 30 days. A
// movement is on the list when its counterparty's country is listed, or when either end of its
// corridor (debit country > credit country) is, so a listed jurisdiction on the subject's own side
// counts too.
//
// Default list (operators are expected to maintain their own; this is a floor, not advice):
// FATF "High-Risk Jurisdictions subject to a Call for Action" and part of its "Jurisdictions under
// Increased Monitoring", public statements of the February and June 2025 plenaries.
// - Call for action: KP (DPRK), IR (Iran), MM (Myanmar).
// - Increased monitoring, those also under broad sanctions or in armed conflict: SY (Syria),
//   YE (Yemen), SS (South Sudan), HT (Haiti), VE (Venezuela), LB (Lebanon), CD (DR Congo).
//   The rest of the June 2025 list (DZ, AO, BO, BG, BF, CM, CI, KE, LA, MC, MZ, NA, NP, NG, ZA,
//   VN, VG) is left out of the default: it includes large remittance corridors where most
//   payments are family support, and an operator should choose them with their own risk appetite.
//   The list changes three times a year: check fatf-gafi.org at every plenary.
//
// Severity: excess = sum / minSum (grade.ts); a weak signal unless a call-for-action jurisdiction
// is involved (money to a monitored jurisdiction is common and lawful; to a call-for-action one it
// is rarely either).
import { z } from 'zod';
import type { ActivityRecord } from '../../../../platform/aggregates/port.ts';
import { defineDetector, noHit, type DetectorOutcome } from '../../framework/detector.ts';
import { perParameters } from '../../framework/per-parameters.ts';
import { distinctMovements, LISTING_LIMIT } from './dealings.ts';
import { byAmount, counted, evidenceOf } from './evidence.ts';
import { grade } from './grade.ts';
import { formatMoney } from '../../framework/money-text.ts';
import { minorUnits, ratio, sumOf } from './money.ts';

const CALL_FOR_ACTION = ['KP', 'IR', 'MM'];
const MONITORED = ['SY', 'YE', 'SS', 'HT', 'VE', 'LB', 'CD'];
const country = z.string().regex(/^[A-Z]{2}$/, 'must be an ISO 3166-1 alpha-2 code in upper case');

const params = z.strictObject({
  countries: z.array(country).default([...CALL_FOR_ACTION, ...MONITORED]),
  // Listed jurisdictions whose involvement alone makes a hit a strong signal.
  callForActionCountries: z.array(country).default(CALL_FOR_ACTION),
  window: z.enum(['7d', '30d', '90d']).default('30d'),
  minCount: z.number().int().min(1).default(1),
  // Base minor units: 1,000.00.
  minSum: minorUnits('100000'),
});

export const highRiskGeography = defineDetector({
  id: 'high_risk_geography',
  typology: 'Movements with high-risk jurisdictions',
  version: 1,
  subjects: ['account', 'party'],
  triggers: ['movement'],
  needs: [{ family: 'movement' }],
  windows: ['7d', '30d', '90d'],
  params,
  async evaluate(ctx, p): Promise<DetectorOutcome> {
    const listed = listedOf(p);
    const stats = await ctx.window(p.window);
    const touches = stats.countries.some((g) => listed.has(g.key)) || stats.corridors.some((g) => endsOf(g.key).some((c) => listed.has(c)));
    if (!touches) return noHit();

    const listing = await ctx.activities(stats.from, { limit: LISTING_LIMIT });
    // Once per movement: a party's own cross-border transfer is one movement, seen twice.
    const risky = distinctMovements(listing.filter((r) => countriesOf(r).some((c) => listed.has(c))));
    const sum = sumOf(risky.map((r) => r.baseValue));
    const minSum = BigInt(p.minSum);
    if (risky.length < p.minCount || sum < minSum || sum === 0n) return noHit();

    const byCountry = new Map<string, { count: number; sum: bigint }>();
    for (const record of risky) {
      for (const code of new Set(countriesOf(record).filter((c) => listed.has(c)))) {
        const entry = byCountry.get(code) ?? { count: 0, sum: 0n };
        entry.count += 1;
        entry.sum += record.baseValue ?? 0n;
        byCountry.set(code, entry);
      }
    }
    const involved = [...byCountry.keys()].sort();
    const callForAction = involved.filter((c) => p.callForActionCountries.includes(c));
    const { severity, score } = grade(ratio(sum, minSum), { weak: callForAction.length === 0 });
    return {
      outcome: 'hit',
      severity,
      score,
      evidence: evidenceOf(ctx, {
        records: [...risky].sort(byAmount),
        from: stats.from,
        to: stats.to,
        thresholds: [
          { name: 'listed_jurisdiction_movements', threshold: p.minCount, observed: risky.length },
          { name: 'listed_jurisdiction_sum', threshold: p.minSum, observed: sum.toString() },
        ],
        facts: {
          jurisdictions: Object.fromEntries([...byCountry].map(([code, e]) => [code, { count: e.count, sum: e.sum.toString() }])),
          callForAction,
          listing_truncated: listing.length >= LISTING_LIMIT,
        },
      }),
      summary:
        `${counted(risky.length, 'movement')} (${formatMoney(sum, ctx.baseAsset)}) in ${p.window} involved listed jurisdictions ${involved.join(', ')}` +
        `${callForAction.length > 0 ? ` (FATF call for action: ${callForAction.join(', ')})` : ''}; minimum ${formatMoney(minSum, ctx.baseAsset)}.`,
    };
  },
});

function endsOf(corridor: string | null): string[] {
  return corridor ? corridor.split('>') : [];
}

function countriesOf(record: ActivityRecord): string[] {
  return [...(record.counterpartyCountry ? [record.counterpartyCountry] : []), ...endsOf(record.corridor)];
}

// The countries a parameter set lists.
const listedOf = perParameters((p: { countries: readonly string[]; callForActionCountries: readonly string[] }): ReadonlySet<string> => new Set([...p.countries, ...p.callForActionCountries]));
