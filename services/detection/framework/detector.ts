// What a detector is: a named, versioned rule of one typology that, evaluated on one subject at
// one instant of event time, answers hit, no_hit, or an explicit non-result (spec rule 4:
// insufficient_data, stale or not_applicable are real answers, not errors).
import type { z } from 'zod';
import type { ParameterRule } from './parameter-rules.ts';
import type { WindowName } from '../../../platform/aggregates/port.ts';
import type { SubjectContext } from './context.ts';

export type SubjectKind = 'account' | 'party';

export interface SubjectRef {
  kind: SubjectKind;
  id: string;
}

export const SEVERITIES = ['low', 'medium', 'high', 'critical'] as const;
export type Severity = (typeof SEVERITIES)[number];

export function severityRank(severity: Severity): number {
  return SEVERITIES.indexOf(severity);
}

// What made the framework evaluate a subject: a canonical movement or control event (the change
// record's external id and type), or the schedule (a window that closed).
export type TriggerKind = 'movement' | 'control_event' | 'schedule';

// A threshold the subject's behaviour crossed: its name, the configured limit and what was seen.
// Money is base-asset minor units as a decimal string; counts and ratios are numbers.
export interface ThresholdCrossed {
  name: string;
  threshold: string | number;
  observed: string | number;
}

// The facts behind a hit, enough for an analyst to check it without the detector's code.
export interface Evidence {
  // Movement external ids, most relevant first (at most 50).
  movements: string[];
  // Counterparty keys (`account:A1`, `party:P1`), most relevant first (at most 50).
  counterparties: string[];
  // Totals in the tenant's base asset (minor units as decimal strings).
  amounts: { total: string; count: number; asset: string; in?: string; out?: string };
  // The event-time window the facts fall in: (from, to].
  window: { from: string; to: string };
  thresholds: ThresholdCrossed[];
  // How this compares with the subject's own normal behaviour, when there is a baseline.
  baseline?: { days: number; mean: string; stddev: string; observed: string; metric: string };
  // Anything else the detector wants to show (cycle paths, shared identifiers, control events).
  facts?: Record<string, unknown>;
}

export interface Hit {
  outcome: 'hit';
  // 0..1: how strongly the facts match the typology.
  score: number;
  severity: Severity;
  evidence: Evidence;
  // One or two sentences an analyst can read: which facts, which thresholds.
  summary: string;
}

export type NonResultOutcome = 'insufficient_data' | 'stale' | 'not_applicable';

export type DetectorOutcome =
  | Hit
  | { outcome: 'no_hit' }
  | { outcome: NonResultOutcome; reason: string };

export const noHit = (): DetectorOutcome => ({ outcome: 'no_hit' });
export const nonResult = (outcome: NonResultOutcome, reason: string): DetectorOutcome => ({ outcome, reason });

// Data a detector needs. An entity family (party, account) must exist for the subject and, with
// maxAgeDays, its current version must be that recent in event time, else the framework answers
// insufficient_data (missing) or stale (too old) without running the detector. A fact family
// (movement, control_event) must have arrived for the tenant at all, else insufficient_data.
export interface DataNeed {
  family: 'party' | 'account' | 'movement' | 'control_event';
  maxAgeDays?: number;
}

export interface Detector<P extends z.ZodType = z.ZodType> {
  // Stable, snake_case; what rulesets name.
  id: string;
  typology: string;
  version: number;
  // Subject kinds it evaluates; a subject of another kind is not_applicable (never evaluated).
  subjects: readonly SubjectKind[];
  // What re-evaluates it: movements touching the subject, control events about it, the schedule.
  triggers: readonly TriggerKind[];
  needs: readonly DataNeed[];
  // The event-time windows it reads (documentation and scheduling: a window closes `window`
  // after the subject's last activity).
  windows: readonly WindowName[];
  // Parameters with their defaults: parse({}) gives the defaults.
  params: P;
  // Rules between parameters that a new ruleset document must keep (parameter-rules.ts).
  rules?: readonly ParameterRule[];
  // Overrides the built-in default ruleset applies per customer segment (for example a higher
  // cash threshold for cash agents). Keys are party segments; values are partial parameters.
  segmentDefaults?: Partial<Record<string, Record<string, unknown>>>;
  // Runs only in rulesets that name it: the built-in default ruleset leaves it out (a learned
  // model needs a model chosen per tenant).
  optIn?: boolean;
  evaluate(ctx: SubjectContext, params: z.infer<P>): Promise<DetectorOutcome>;
}

// A detector of any parameter type, as the library and the framework hold them.
export type AnyDetector = Detector<z.ZodType>;

export function defineDetector<P extends z.ZodType>(detector: Detector<P>): AnyDetector {
  return detector as unknown as AnyDetector;
}
