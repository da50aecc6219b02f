// The explanation an analyst reads on an alert: which facts, which thresholds, and how this
// compares with the subject's normal behaviour. Built from the hit's evidence and the subject's
// own daily baseline, in words and in the tenant's base asset (major units).
import type { Baseline } from '../../platform/aggregates/port.ts';
import { formatMoney } from './framework/money-text.ts';
import type { AnyDetector, Hit } from './framework/detector.ts';

const isMoneyText = (value: string | number): value is string => typeof value === 'string' && /^-?\d+$/.test(value);

export function explain(detector: AnyDetector, hit: Hit, baseline: Baseline | null, asset: string): string {
  const { evidence } = hit;
  // A ratio over a mean of nothing is unbounded: said so, as the evidence (JSON) holds it as null.
  const money = (value: string | number) =>
    isMoneyText(value) ? formatMoney(value, asset) : typeof value === 'number' && !Number.isFinite(value) ? 'unbounded (none before)' : String(value);
  const lines = [
    `${detector.typology} (${detector.id} v${detector.version}), severity ${hit.severity}, score ${hit.score.toFixed(2)}.`,
    hit.summary,
    `Facts: ${evidence.amounts.count} movement(s) totalling ${formatMoney(evidence.amounts.total, evidence.amounts.asset)} between ${evidence.window.from} and ${evidence.window.to}` +
      (evidence.counterparties.length > 0 ? `, with ${evidence.counterparties.length} counterpart${evidence.counterparties.length === 1 ? 'y' : 'ies'}.` : '.'),
  ];
  if (evidence.thresholds.length > 0) {
    lines.push(`Thresholds crossed: ${evidence.thresholds.map((t) => `${t.name} ${money(t.observed)} against ${money(t.threshold)}`).join('; ')}.`);
  }
  if (evidence.baseline) {
    const b = evidence.baseline;
    lines.push(`Against its own history (${b.days} days): ${b.metric} ${money(b.observed)} where the mean is ${money(b.mean)} (standard deviation ${money(b.stddev)}).`);
  } else if (baseline && baseline.days > 0) {
    lines.push(
      `Normal behaviour over the previous ${baseline.days} day(s): on average ${formatMoney(baseline.in.meanSum, asset)} in (${baseline.in.meanCount.toFixed(1)} movements) ` +
        `and ${formatMoney(baseline.out.meanSum, asset)} out (${baseline.out.meanCount.toFixed(1)} movements) per day.`,
    );
  } else {
    lines.push('No earlier activity of this subject to compare with.');
  }
  return lines.join('\n');
}
