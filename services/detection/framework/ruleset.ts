// Rulesets: versioned sets of detector configurations. A ruleset names the detectors it runs and,
// for each, parameters over the detector's defaults, then overrides per customer segment and per
// risk tier (the party's kyc.tier) — the tier's override wins over the segment's. Compiling checks
// every layer against the detector's own parameter schema, so a ruleset that would fail on some
// subject is refused when it is created, never discovered on live traffic.
import { z } from 'zod';
import { partyDataSchema } from '../../../schemas/families/party.ts';
import type { AnyDetector } from './detector.ts';
import { convertedMoneyDefaults, convertMoneyLayer, withoutMoneyDefaults, type MoneyDefaults } from './money-params.ts';

const SEGMENTS = partyDataSchema.shape.segment.unwrap().options;

const paramLayer = z.record(z.string(), z.unknown());

const detectorConfigSchema = z.strictObject({
  enabled: z.boolean().default(true),
  params: paramLayer.default({}),
  by_segment: z.partialRecord(z.enum(SEGMENTS), paramLayer).default({}),
  by_risk_tier: z.record(z.string().min(1).max(64), paramLayer).default({}),
});

const rulesetDocumentSchema = z.strictObject({
  name: z.string().min(1).max(128),
  description: z.string().max(2000).optional(),
  detectors: z.record(z.string().regex(/^[a-z][a-z0-9_]{0,63}$/), detectorConfigSchema),
});

export type RulesetDocument = z.input<typeof rulesetDocumentSchema>;
type ParsedDocument = z.output<typeof rulesetDocumentSchema>;
type DetectorConfig = z.output<typeof detectorConfigSchema>;

export interface RulesetIssue {
  path: string;
  message: string;
}

export interface ConfiguredDetector {
  detector: AnyDetector;
  // Parameters for a subject of this segment and risk tier (either may be unknown).
  paramsFor(segment: string | undefined, tier: string | undefined): unknown;
}

export interface CompiledRuleset {
  // 0 is the built-in default ruleset; stored rulesets count from 1 per tenant.
  version: number;
  name: string;
  detectors: ConfiguredDetector[];
}

export type CompileOutcome = { ok: true; ruleset: CompiledRuleset } | { ok: false; issues: RulesetIssue[] };

// `rules`: whether the detectors' parameter rules are checked too. A new document must keep them;
// a stored one (rules: false) compiles as it did when it was accepted (parameter-rules.ts).
// `moneyDefaults`: how money parameters the document leaves to their USD defaults become the
// tenant's base asset (money-params.ts); without it they stay as they are (a USD tenant).
export function compileRuleset(
  version: number,
  document: unknown,
  library: readonly AnyDetector[],
  options: { rules?: boolean; moneyDefaults?: MoneyDefaults } = {},
): CompileOutcome {
  const parsed = rulesetDocumentSchema.safeParse(document);
  if (!parsed.success) return { ok: false, issues: parsed.error.issues.map((issue) => ({ path: issue.path.join('.'), message: issue.message })) };
  const byId = new Map(library.map((detector) => [detector.id, detector]));
  const issues: RulesetIssue[] = [];
  const detectors: ConfiguredDetector[] = [];
  for (const [id, config] of Object.entries(parsed.data.detectors)) {
    const detector = byId.get(id);
    if (!detector) {
      issues.push({ path: `detectors.${id}`, message: `no detector ${id}; known: ${[...byId.keys()].sort().join(', ')}` });
      continue;
    }
    const configured = configure(detector, config, `detectors.${id}`, issues, options.rules ?? true, options.moneyDefaults);
    if (configured && config.enabled) detectors.push(configured);
  }
  if (issues.length > 0) return { ok: false, issues };
  return { ok: true, ruleset: { version, name: parsed.data.name, detectors } };
}

// Every combination a subject can meet is parsed once, here: the base, each segment, each tier,
// and each segment with each tier.
function configure(
  detector: AnyDetector,
  config: DetectorConfig,
  path: string,
  issues: RulesetIssue[],
  checkRules: boolean,
  moneyDefaults: MoneyDefaults | undefined,
): ConfiguredDetector | undefined {
  const before = issues.length;
  // Money parameters the layers leave out start from their defaults in the base asset.
  const start = convertedMoneyDefaults(detector, moneyDefaults);
  const parse = (layers: Array<Record<string, unknown>>, where: string) => {
    const result = detector.params.safeParse(Object.assign({}, start, ...layers));
    if (!result.success) {
      for (const issue of result.error.issues) issues.push({ path: [where, ...issue.path].join('.'), message: issue.message });
      return undefined;
    }
    for (const rule of checkRules ? (detector.rules ?? []) : []) {
      if (!rule.holds(result.data as Record<string, unknown>)) issues.push({ path: `${where}.${rule.path}`, message: rule.message });
    }
    return result.data;
  };
  const base = parse([config.params], `${path}.params`);
  const segments = new Map(Object.entries(config.by_segment).map(([segment, layer]) => [segment, layer ?? {}]));
  const tiers = new Map(Object.entries(config.by_risk_tier));
  const resolved = new Map<string, unknown>();
  for (const [segment, layer] of segments) resolved.set(`${segment}|`, parse([config.params, layer], `${path}.by_segment.${segment}`));
  for (const [tier, layer] of tiers) {
    resolved.set(`|${tier}`, parse([config.params, layer], `${path}.by_risk_tier.${tier}`));
    for (const [segment, segmentLayer] of segments) resolved.set(`${segment}|${tier}`, parse([config.params, segmentLayer, layer], `${path}.by_risk_tier.${tier}`));
  }
  if (issues.length > before) return undefined;
  return {
    detector: withoutMoneyDefaults(detector, config.params, moneyDefaults),
    paramsFor(segment, tier) {
      const withTier = tier !== undefined && tiers.has(tier) ? tier : '';
      const withSegment = segment !== undefined && segments.has(segment) ? segment : '';
      if (!withTier && !withSegment) return base;
      return resolved.get(`${withSegment}|${withTier}`);
    },
  };
}

// The built-in ruleset (version 0): every detector of the library with its own defaults and the
// segment overrides it ships with (their money in the base asset, as the defaults). A tenant runs
// it until it activates a ruleset of its own.
export function defaultRulesetDocument(library: readonly AnyDetector[], moneyDefaults?: MoneyDefaults): ParsedDocument {
  const segmentsOf = (detector: AnyDetector) =>
    Object.fromEntries(Object.entries(detector.segmentDefaults ?? {}).map(([segment, layer]) => [segment, convertMoneyLayer(detector, layer ?? {}, moneyDefaults)]));
  return {
    name: 'default',
    description: 'Every detector of the library with its default parameters.',
    detectors: Object.fromEntries(
      library.filter((detector) => !detector.optIn).map((detector) => [detector.id, { enabled: true, params: {}, by_segment: segmentsOf(detector), by_risk_tier: {} }]),
    ),
  };
}
