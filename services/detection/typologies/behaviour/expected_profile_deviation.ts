// Expected-profile deviation: what the party declared at onboarding (expected_profile) against
// its last 30 days. Three checks, each run only when the party declared what it needs:
// - volume: the larger of the month's inflow and outflow (declared_monthly_volume is read as a
//   one-way throughput: a salary of X coming in and being spent is a volume of X, not 2X) above
//   volumeMultiple x the declared volume and above minVolume;
// - cash: the share of cash in everything that moved above what the declared intensity allows
//   (low: more than 10 %; medium: more than 40 %; high: no limit, a cash business declared
//   itself as one), with at least minCashSum of cash;
// - corridors: cross-border corridors used but not declared, with at least minCorridorSum on
//   them. Declared corridors ('GB-US') are read as both directions (GB>US and US>GB as the
//   aggregate store writes them); domestic corridors (US>US) are never "undeclared".
// Transfers between the party's own accounts are left out of volume and cash (nothing moved).
// The declared volume is in its own asset: in another asset than the base one it is converted
// with the FX rate valid at the evaluation's time (the rate a movement of that time would get,
// decision 0006). Without such a rate the volume check is skipped; if nothing else deviates the
// answer is insufficient_data, saying so, rather than a guessed comparison.
// Stale KYC (party data older than 730 days) is answered `stale` by the framework.
//
// Severity: excess = the largest excess among the checks that deviate (observed / allowed),
// graded (grade.ts) as weak when the only deviation is an undeclared corridor, and raised one
// level per further deviating check.
import { z } from 'zod';
import type { ActivityRecord } from '../../../../platform/aggregates/port.ts';
import { defineDetector, noHit, nonResult, type DetectorOutcome, type ThresholdCrossed } from '../../framework/detector.ts';
import type { SubjectContext } from '../../framework/context.ts';
import { dealings, LISTING_LIMIT, windowStart } from './dealings.ts';
import { byAmount, evidenceOf } from './evidence.ts';
import { grade } from './grade.ts';
import { formatMoney } from '../../framework/money-text.ts';
import { convertWith, ratesAt } from '../../../../platform/fx/rates.ts';
import { isoRegistry } from '../../../../schemas/assets/registry.ts';
import { maxOf, minorUnits, ratio, round2, sumOf } from './money.ts';

const params = z.strictObject({
  volumeMultiple: z.number().min(1).default(2),
  // Base minor units: 5,000.00 a month before volume is worth a look at all.
  minVolume: minorUnits('500000'),
  maxCashShareLow: z.number().min(0).max(1).default(0.1),
  maxCashShareMedium: z.number().min(0).max(1).default(0.4),
  minCashSum: minorUnits('100000'),
  minCorridorSum: minorUnits('100000'),
});
type Params = z.infer<typeof params>;

interface Deviation {
  check: 'volume' | 'cash' | 'corridors';
  excess: number;
  thresholds: ThresholdCrossed[];
  records: ActivityRecord[];
  words: string;
}

export const expectedProfileDeviation = defineDetector({
  id: 'expected_profile_deviation',
  typology: 'Deviation from the declared expected profile',
  version: 1,
  subjects: ['party'],
  // On schedule too: a month's flows are judged again once event time has moved on without new
  // movements, and a declared profile that has aged past 730 days turns the answer stale.
  triggers: ['movement', 'schedule'],
  needs: [{ family: 'party', maxAgeDays: 730 }, { family: 'movement' }],
  windows: ['30d'],
  params,
  async evaluate(ctx, p): Promise<DetectorOutcome> {
    const profile = (await ctx.party())?.data.expected_profile as ExpectedProfile | undefined;
    const declaresSomething = profile && (profile.declared_monthly_volume || profile.cash_intensity || profile.corridors);
    if (!declaresSomething) return nonResult('not_applicable', 'the party declared no expected profile');

    const from = windowStart(ctx, '30d');
    const { records, truncated } = await dealings(ctx, from);
    const volume = profile.declared_monthly_volume;
    const declared = volume ? await declaredInBase(ctx, volume) : null;
    const volumeComparable = !volume || declared !== null;
    // A listing cut at its limit under-counts exactly the high-volume parties this check is for: the
    // volume is then the window's exact sums, less the party's own transfers the listing shows.
    const flows = truncated ? await windowFlows(ctx, records) : flowAmounts(records);
    const deviations = [
      volume && declared ? volumeDeviation(records, flows, declared, p, ctx.baseAsset) : null,
      profile.cash_intensity ? cashDeviation(records, profile.cash_intensity, p, ctx.baseAsset) : null,
      profile.corridors ? corridorDeviation(records, profile.corridors, p, ctx.baseAsset) : null,
    ].filter((d): d is Deviation => d !== null);

    if (deviations.length === 0) {
      if (!volumeComparable) {
        return nonResult('insufficient_data', `the declared monthly volume is in ${volume!.asset}, not the base asset ${ctx.baseAsset}, and no FX rate for it was valid at ${ctx.at.toISOString()}; no other declared check deviates`);
      }
      return noHit();
    }
    const top = deviations.reduce((a, b) => (b.excess > a.excess ? b : a));
    const { severity, score } = grade(top.excess, {
      weak: deviations.every((d) => d.check === 'corridors'),
      corroborating: deviations.length - 1,
    });
    const seen = new Set<string>();
    const listed = deviations.flatMap((d) => d.records).filter((r) => !seen.has(r.movementId) && seen.add(r.movementId));
    return {
      outcome: 'hit',
      severity,
      score,
      evidence: evidenceOf(ctx, {
        records: listed,
        from,
        to: ctx.at,
        thresholds: deviations.flatMap((d) => d.thresholds),
        amounts: flows,
        facts: {
          declared: profile,
          deviations: deviations.map((d) => d.check),
          volume_check: !volume ? 'not declared' : declared ? declared.check : `skipped: declared in ${volume.asset}, base asset ${ctx.baseAsset}, no FX rate valid at ${ctx.at.toISOString()}`,
          listing_truncated: truncated,
        },
      }),
      summary: `Against the declared profile over 30 days: ${deviations.map((d) => d.words).join('; ')}.`,
    };
  },
});

interface Money {
  value: string;
  asset: string;
  scale: number;
}

interface DeclaredVolume {
  value: bigint;
  check: string;
  asSent: string;
}

interface ExpectedProfile {
  declared_monthly_volume?: Money;
  corridors?: string[];
  cash_intensity?: 'low' | 'medium' | 'high';
}

function flowAmounts(records: readonly ActivityRecord[]) {
  const inflow = sumOf(records.filter((r) => r.direction === 'in').map((r) => r.baseValue));
  const outflow = sumOf(records.filter((r) => r.direction === 'out').map((r) => r.baseValue));
  return { total: inflow + outflow, count: new Set(records.map((r) => r.movementId)).size, in: inflow, out: outflow };
}

// The 30-day flows from the window statistics (exact, whatever the listing's limit), without the
// transfers between the party's own accounts that the listing shows (dealings leaves them out;
// the statistics count each as an out and an in). Beyond the listing such transfers stay counted.
async function windowFlows(ctx: SubjectContext, listed: readonly ActivityRecord[]) {
  const [stats, all] = await Promise.all([ctx.window('30d'), ctx.activities(windowStart(ctx, '30d'), { limit: LISTING_LIMIT })]);
  const kept = new Set(listed.map((r) => `${r.movementId}\u0000${r.direction}`));
  const internal = all.filter((r) => !kept.has(`${r.movementId}\u0000${r.direction}`));
  const internalIn = sumOf(internal.filter((r) => r.direction === 'in').map((r) => r.baseValue));
  const internalOut = sumOf(internal.filter((r) => r.direction === 'out').map((r) => r.baseValue));
  return {
    total: stats.in.sum - internalIn + stats.out.sum - internalOut,
    count: stats.in.count + stats.out.count - internal.length,
    in: stats.in.sum - internalIn,
    out: stats.out.sum - internalOut,
  };
}

// The declared volume in base minor units: as sent when it is in the base asset, else converted at
// the rate valid at the evaluation's time; null without such a rate. `check` says which, with the
// rate's provenance, for the evidence.
async function declaredInBase(ctx: SubjectContext, volume: Money): Promise<DeclaredVolume | null> {
  const asSent = formatMoney(volume.value, volume.asset);
  if (volume.asset === ctx.baseAsset) return { value: BigInt(volume.value), check: 'done', asSent };
  const toScale = isoRegistry.scaleOf(ctx.baseAsset);
  const [rate] = await ratesAt(ctx.stores.pool, [{ asset: volume.asset, base: ctx.baseAsset, at: ctx.at }]);
  if (!rate || toScale === undefined) return null;
  const value = convertWith(rate, BigInt(volume.value), volume.scale, toScale);
  const pair = rate.direction === 'direct' ? `${volume.asset}/${ctx.baseAsset}` : `${ctx.baseAsset}/${volume.asset}`;
  return {
    value,
    check: `done: declared ${asSent} = ${formatMoney(value, ctx.baseAsset)} at ${pair} ${rate.rate} (${rate.direction}, valid from ${rate.validFrom.toISOString()}, rate file ${rate.fileId})`,
    asSent,
  };
}

function volumeDeviation(records: ActivityRecord[], flows: { in: bigint; out: bigint }, volume: DeclaredVolume, p: Params, asset: string): Deviation | null {
  const declared = volume.value;
  const { in: inflow, out: outflow } = flows;
  const observed = maxOf(inflow, outflow);
  const minVolume = BigInt(p.minVolume);
  // Whole-number arithmetic: allowed = declared x multiple, the multiple to two decimals.
  const allowed = (declared * BigInt(Math.round(p.volumeMultiple * 100))) / 100n;
  if (observed < minVolume || observed <= allowed || observed === 0n) return null;
  const direction = inflow >= outflow ? 'in' : 'out';
  return {
    check: 'volume',
    excess: allowed > 0n ? ratio(observed, allowed) : ratio(observed, minVolume),
    thresholds: [
      { name: 'volume_vs_declared', threshold: allowed.toString(), observed: observed.toString() },
      { name: 'volume_minimum', threshold: p.minVolume, observed: observed.toString() },
    ],
    records: records.filter((r) => r.direction === direction).sort(byAmount).slice(0, 20),
    words:
      `${direction === 'in' ? 'inflow' : 'outflow'} of ${formatMoney(observed, asset)} is ${round2(ratio(observed, declared))}x the declared monthly ${formatMoney(declared, asset)}` +
      `${formatMoney(declared, asset) === volume.asSent ? '' : ` (${volume.asSent})`} (limit ${p.volumeMultiple}x)`,
  };
}

function cashDeviation(records: ActivityRecord[], intensity: 'low' | 'medium' | 'high', p: Params, asset: string): Deviation | null {
  const limit = intensity === 'low' ? p.maxCashShareLow : intensity === 'medium' ? p.maxCashShareMedium : null;
  if (limit === null) return null;
  const cash = records.filter((r) => r.cash);
  const cashSum = sumOf(cash.map((r) => r.baseValue));
  const total = sumOf(records.map((r) => r.baseValue));
  const share = ratio(cashSum, total);
  if (cashSum < BigInt(p.minCashSum) || cashSum === 0n || share <= limit) return null;
  return {
    check: 'cash',
    excess: limit > 0 ? share / limit : ratio(cashSum, BigInt(p.minCashSum) || 1n),
    thresholds: [
      { name: `cash_share_${intensity}_intensity`, threshold: limit, observed: round2(share) },
      { name: 'cash_minimum', threshold: p.minCashSum, observed: cashSum.toString() },
    ],
    records: cash.sort(byAmount).slice(0, 20),
    words: `cash was ${Math.round(share * 100)}% of the money moved (${formatMoney(cashSum, asset)}) against ${Math.round(limit * 100)}% allowed for a declared ${intensity} cash intensity`,
  };
}

function corridorDeviation(records: ActivityRecord[], declared: readonly string[], p: Params, asset: string): Deviation | null {
  const allowed = new Set(declared.map(pairOf).filter((x): x is string => x !== null));
  const undeclared = new Map<string, ActivityRecord[]>();
  for (const record of records) {
    const pair = record.corridor ? pairOf(record.corridor) : null;
    if (!pair || allowed.has(pair) || isDomestic(record.corridor!)) continue;
    undeclared.set(record.corridor!, [...(undeclared.get(record.corridor!) ?? []), record]);
  }
  const on = [...undeclared.values()].flat();
  const sum = sumOf(on.map((r) => r.baseValue));
  const minSum = BigInt(p.minCorridorSum);
  if (on.length === 0 || sum < minSum || sum === 0n) return null;
  const corridors = [...undeclared.keys()].sort();
  return {
    check: 'corridors',
    excess: ratio(sum, minSum || 1n),
    thresholds: [{ name: 'undeclared_corridor_sum', threshold: p.minCorridorSum, observed: sum.toString() }],
    records: on.sort(byAmount).slice(0, 20),
    words: `${formatMoney(sum, asset)} moved on undeclared corridors ${corridors.join(', ')} (declared: ${declared.join(', ') || 'none'})`,
  };
}

// 'GB-US', 'GB>US' and 'US>GB' are one corridor: the two countries, sorted.
function pairOf(corridor: string): string | null {
  const ends = corridor.toUpperCase().split(/[->]/).map((s) => s.trim());
  if (ends.length !== 2 || !ends.every((e) => /^[A-Z]{2}$/.test(e))) return null;
  return [...ends].sort().join('|');
}

function isDomestic(corridor: string): boolean {
  const [a, b] = corridor.split('>');
  return a === b;
}
