// Velocity spike: the last 24 hours against the subject's own daily baseline (the whole UTC days
// before today, at most baselineDays, zero-activity days included). Four metrics: sum and count,
// in and out. A metric spikes when every gate holds:
//   z = (observed - mean) / max(stddev, floor) >= minZ,
//   observed >= minRatio x mean (a quiet account's small stddev alone does not make a spike),
//   observed >= minAmount (sums) or minCount (counts): an absolute floor on what is worth a look.
// minZ is 8, not the textbook 3: an event of the usual size that happens k times in n baseline
// days scores z ~ sqrt((n - k) / k): 5.4 for a monthly salary or rent (3 in 90 days), 6.6 when
// only two paydays fall inside the 90 days. Paydays are not spikes; twice the usual salary is.
// Fewer than minBaselineDays of history is insufficient_data: there is no "normal" yet.
//
// Severity: excess = the smallest of z / minZ, ratio / minRatio, observed / minimum (every gate
// has to be exceeded by that much) for the metric with the largest excess (grade.ts); a hit on
// counts alone is a weak signal.
import { z } from 'zod';
import type { Baseline, FlowBaseline, WindowStats } from '../../../../platform/aggregates/port.ts';
import { defineDetector, noHit, nonResult, type DetectorOutcome, type ThresholdCrossed } from '../../framework/detector.ts';
import { notAbove } from '../../framework/parameter-rules.ts';
import { dealings } from './dealings.ts';
import { byAmount, evidenceOf } from './evidence.ts';
import { grade } from './grade.ts';
import { formatMoney } from '../../framework/money-text.ts';
import { minorUnits, round2 } from './money.ts';

const METRICS = ['out_sum', 'in_sum', 'out_count', 'in_count'] as const;
type Metric = (typeof METRICS)[number];

const params = z.strictObject({
  baselineDays: z.number().int().min(14).max(365).default(90),
  minBaselineDays: z.number().int().min(1).default(14),
  metrics: z.array(z.enum(METRICS)).min(1).default([...METRICS]),
  minZ: z.number().positive().default(8),
  minRatio: z.number().min(1).default(5),
  // Base minor units: 5,000.00 in a day for sums; 100.00 as the smallest stddev believed.
  minAmount: minorUnits('500000'),
  stddevFloor: minorUnits('10000'),
  minCount: z.number().int().min(1).default(10),
  stddevFloorCount: z.number().positive().default(1),
});
type Params = z.infer<typeof params>;

interface Spike {
  metric: Metric;
  // As numbers for the gates, which only need ratios; sums exactly, as minor-unit text, for the
  // evidence (counts as numbers there too).
  observed: number;
  mean: number;
  stddev: number;
  exact: { observed: string | number; mean: string | number; stddev: string | number };
  z: number;
  ratio: number;
  excess: number;
}

export const velocitySpike = defineDetector({
  id: 'velocity_spike',
  typology: 'Velocity spike against own baseline',
  version: 1,
  subjects: ['account', 'party'],
  triggers: ['movement'],
  needs: [{ family: 'movement' }],
  windows: ['24h'],
  params,
  rules: [notAbove('minBaselineDays', 'baselineDays')],
  async evaluate(ctx, p): Promise<DetectorOutcome> {
    const baseline = await ctx.baseline(p.baselineDays);
    if (baseline.days < p.minBaselineDays) {
      return nonResult('insufficient_data', `the subject has ${baseline.days} days of history before today; the baseline needs ${p.minBaselineDays}`);
    }
    const day = await ctx.window('24h');
    const spikes = p.metrics.map((metric) => spikeOf(metric, day, baseline, p)).filter((s): s is Spike => s !== null);
    if (spikes.length === 0) return noHit();

    const top = spikes.reduce((a, b) => (b.excess > a.excess ? b : a));
    const direction = top.metric.startsWith('in') ? 'in' : 'out';
    const isSum = top.metric.endsWith('sum');
    const { records } = await dealings(ctx, day.from);
    const listed = records.filter((r) => r.direction === direction);
    if (isSum) listed.sort(byAmount);
    const { severity, score } = grade(top.excess, { weak: spikes.every((s) => s.metric.endsWith('count')) });
    const thresholds: ThresholdCrossed[] = spikes.flatMap((s) => [
      { name: `${s.metric}_zscore`, threshold: p.minZ, observed: round2(s.z) },
      { name: `${s.metric}_ratio_to_mean`, threshold: p.minRatio, observed: round2(s.ratio) },
      { name: `${s.metric}_minimum`, threshold: s.metric.endsWith('sum') ? p.minAmount : p.minCount, observed: s.exact.observed },
    ]);
    const show = (exact: string | number) => (typeof exact === 'string' ? formatMoney(exact, ctx.baseAsset) : round2(exact).toString());
    return {
      outcome: 'hit',
      severity,
      score,
      evidence: evidenceOf(ctx, {
        records: listed,
        from: day.from,
        to: day.to,
        thresholds,
        amounts: { total: day[direction].sum, count: day[direction].count, ...(direction === 'in' ? { in: day.in.sum } : { out: day.out.sum }) },
        baseline: {
          days: baseline.days,
          mean: isSum ? String(top.exact.mean) : top.mean.toFixed(2),
          stddev: isSum ? String(top.exact.stddev) : top.stddev.toFixed(2),
          // A count is written with its two decimals, as its mean is (and network/baseline.ts
          // writes counts): a bare digit string in a baseline is a sum of money to every reader.
          observed: isSum ? String(top.exact.observed) : Number(top.exact.observed).toFixed(2),
          metric: top.metric,
        },
        facts: { spikes: spikes.map((s) => ({ metric: s.metric, ...s.exact, z: round2(s.z), ratio: round2(s.ratio) })) },
      }),
      summary:
        `${direction === 'in' ? 'Incoming' : 'Outgoing'} ${isSum ? 'amount' : 'count'} in 24h of ${show(top.exact.observed)} against a daily mean of ${show(top.exact.mean)} ` +
        `over ${baseline.days} days (z ${round2(top.z)} >= ${p.minZ}, ${Number.isFinite(top.ratio) ? `${round2(top.ratio)}x the mean >= ${p.minRatio}x` : `where the mean was nothing at all`}).`,
    };
  },
});

function spikeOf(metric: Metric, day: WindowStats, baseline: Baseline, p: Params): Spike | null {
  const direction = metric.startsWith('in') ? 'in' : 'out';
  const flow: FlowBaseline = baseline[direction];
  if (metric.endsWith('sum')) {
    const sum = day[direction].sum;
    // The absolute floor is compared exactly; past it the gates only need ratios.
    if (sum <= 0n || sum < BigInt(p.minAmount)) return null;
    const exact = { observed: sum.toString(), mean: flow.meanSum.toString(), stddev: flow.stddevSum.toString() };
    return gated(metric, Number(sum), Number(flow.meanSum), Number(flow.stddevSum), Number(p.stddevFloor), Number(p.minAmount), exact, p);
  }
  const count = day[direction].count;
  if (count <= 0 || count < p.minCount) return null;
  const exact = { observed: count, mean: flow.meanCount, stddev: flow.stddevCount };
  return gated(metric, count, flow.meanCount, flow.stddevCount, p.stddevFloorCount, p.minCount, exact, p);
}

function gated(metric: Metric, observed: number, mean: number, stddev: number, floor: number, minimum: number, exact: Spike['exact'], p: Params): Spike | null {
  const z = (observed - mean) / Math.max(stddev, floor);
  const ratio = mean > 0 ? observed / mean : Number.POSITIVE_INFINITY;
  if (z < p.minZ || ratio < p.minRatio) return null;
  const excess = Math.min(z / p.minZ, ratio / p.minRatio, minimum > 0 ? observed / minimum : Number.POSITIVE_INFINITY);
  return { metric, observed, mean, stddev, exact, z, ratio, excess };
}
