import { empty, facts, h, json, when, type Child } from '../dom.ts';
import { counterpartyLink, movementLink } from '../format/links.ts';
import { formatMoney } from '../format/money.ts';
import type { Evidence } from '../payloads.ts';

// The evidence of a hit as an analyst reads it (services/detection/framework/detector.ts Evidence):
// totals in money, thresholds as "observed / threshold", the subject's baseline, the learned
// model's score and features, and the movements and counterparties as links. Evidence is stored
// JSON written by many detectors over time, so every part is optional here.

const INTEGER = /^-?\d+$/;

// Evidence money is base-asset minor units as a decimal string; counts and ratios are numbers.
const valueText = (value: unknown, asset: string | undefined): string => {
  if (typeof value === 'string' && INTEGER.test(value) && asset) return formatMoney(value, asset);
  if (typeof value === 'number') return Number.isInteger(value) ? String(value) : String(Math.round(value * 1000) / 1000);
  return value === undefined || value === null ? '—' : String(value);
};

// Other facts a detector adds (services/detection/framework/detector.ts Evidence.facts) are free-form:
// an integer string under a money-named key is base-asset minor units, like everywhere in evidence.
const MONEY_KEY = /(^|_)(sum|total|amount|in|out|mean|stddev|value|volume|balance)$/;
function factsTree(value: unknown, asset: string | undefined, key = ''): HTMLElement {
  if (typeof value === 'string' && INTEGER.test(value) && MONEY_KEY.test(key)) return h('span', { class: 'money' }, valueText(value, asset));
  if (isRecord(value)) return facts(Object.entries(value).map(([k, v]) => [k.replaceAll('_', ' '), factsTree(v, asset, k)]));
  if (Array.isArray(value) && value.some((v) => typeof v === 'object' && v !== null)) return h('ul', { class: 'json' }, value.map((v) => h('li', null, factsTree(v, asset))));
  return json(value);
}

const table = (testid: string, caption: string, head: string[], rows: Child[][]) =>
  h(
    'table',
    { class: `grid ${testid}`, 'data-testid': testid },
    h('caption', null, caption),
    h('thead', null, h('tr', null, head.map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', null, rows.map((cells) => h('tr', null, cells.map((c, i) => h('td', i > 0 ? { class: 'num' } : null, c))))),
  );

interface ModelFeature {
  feature: string;
  meaning?: string;
  value: string;
  own_baseline: string;
  contribution?: number;
}
interface ModelFacts {
  model?: { id?: string; version?: number; trained_at?: string | null };
  score?: number;
  threshold?: number;
  top_features?: ModelFeature[];
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

// The learned detector's explanation (services/detection/models/detector.ts): feature values and
// baselines arrive already worded and formatted by the detector, so they are shown as given.
function modelSection(model: ModelFacts): HTMLElement {
  const features = Array.isArray(model.top_features) ? model.top_features : [];
  return h(
    'section',
    { class: 'model', 'data-testid': 'model', 'aria-label': 'learned model' },
    h('h3', null, 'Learned model'),
    facts([
      ['Model', `${model.model?.id ?? '—'}${model.model?.version !== undefined ? ` v${model.model.version}` : ''}`],
      ['Trained', when(model.model?.trained_at ?? undefined)],
      ['Score / threshold', `${valueText(model.score, undefined)} / ${valueText(model.threshold, undefined)}`],
    ]),
    features.length
      ? table(
          'features',
          'What weighed most',
          ['Feature', 'Value', "Subject's baseline", 'Weight'],
          features.map((f) => [f.meaning ?? f.feature, f.value, f.own_baseline, f.contribution === undefined ? '—' : String(f.contribution)]),
        )
      : empty('The model named no features.'),
  );
}

// `party`: the alert's party, to place account and movement links in.
export function evidenceView(raw: Record<string, unknown> | null | undefined, party: string | null): HTMLElement {
  const e = (raw ?? {}) as Partial<Evidence>;
  const asset = e.amounts?.asset;
  const window = isRecord(e.window) ? { from: e.window.from, to: e.window.to } : undefined;
  const thresholds = Array.isArray(e.thresholds) ? e.thresholds : [];
  const movements = Array.isArray(e.movements) ? e.movements.map(String) : [];
  const counterparties = Array.isArray(e.counterparties) ? e.counterparties.map(String) : [];
  const { model, score, threshold, top_features, ...otherFacts } = (isRecord(e.facts) ? e.facts : {}) as ModelFacts & Record<string, unknown>;
  const isModel = isRecord(model) || Array.isArray(top_features);
  return h(
    'div',
    { class: 'evidence', 'data-testid': 'evidence' },
    e.amounts
      ? facts([
          ['Movements', String(e.amounts.count ?? movements.length)],
          ['Total', h('span', { 'data-testid': 'evidence-total' }, valueText(e.amounts.total, asset))],
          ...(e.amounts.in !== undefined ? [['In', valueText(e.amounts.in, asset)] as [string, Child]] : []),
          ...(e.amounts.out !== undefined ? [['Out', valueText(e.amounts.out, asset)] as [string, Child]] : []),
          ['Window', window ? `${when(window.from)} → ${when(window.to)}` : '—'],
        ])
      : null,
    thresholds.length ? table('thresholds', 'Thresholds crossed', ['Threshold', 'Observed', 'Limit'], thresholds.map((t) => [t.name.replaceAll('_', ' '), valueText(t.observed, asset), valueText(t.threshold, asset)])) : null,
    e.baseline
      ? table('baseline', `Against its own previous ${e.baseline.days} days`, ['Measure', 'Observed', 'Mean', 'Std. deviation'], [[e.baseline.metric.replaceAll('_', ' '), valueText(e.baseline.observed, asset), valueText(e.baseline.mean, asset), valueText(e.baseline.stddev, asset)]])
      : null,
    isModel ? modelSection({ model: model, score, threshold, top_features }) : null,
    movements.length ? [h('h3', null, `Movements (${movements.length})`), h('ul', { class: 'id-list', 'data-testid': 'evidence-movements' }, movements.map((m) => h('li', null, movementLink(m, party, window))))] : null,
    counterparties.length ? [h('h3', null, `Counterparties (${counterparties.length})`), h('ul', { class: 'id-list', 'data-testid': 'evidence-counterparties' }, counterparties.map((c) => h('li', null, counterpartyLink(c, party))))] : null,
    Object.keys(otherFacts).length ? [h('h3', null, 'Other facts'), h('div', { 'data-testid': 'evidence-facts' }, factsTree(otherFacts, asset))] : null,
  );
}
