// Money parameters of detectors: decimal strings of base-asset minor units, so rulesets stay plain
// JSON. Their defaults are USD cents, the currency the detectors were calibrated in (a US CTR is
// USD 10,000.00); a tenant with another base asset gets them converted (decision 0081): 1,000,000
// minor units is 10,000.00 USD but 1,000,000 JPY or 1,000.000 BHD, a sixth and a quarter of it.
import { z } from 'zod';
import { nonResult, type AnyDetector } from './detector.ts';

const MONEY_PARAMETERS = new WeakSet<z.ZodType>();

export function moneyParameter(usdCents: string) {
  const schema = z.string().regex(/^\d+$/, 'must be a decimal string of minor units').default(usdCents);
  MONEY_PARAMETERS.add(schema);
  return schema;
}

// How a tenant's rulesets get the money defaults: unchanged (a USD base), converted from USD
// cents into base minor units, or unavailable (no USD rate for the base asset), with why.
export type MoneyDefaults = { kind: 'usd' } | { kind: 'converted'; convert: (usdCents: string) => string } | { kind: 'unavailable'; reason: string };

const USD: MoneyDefaults = { kind: 'usd' };

// The money parameters of a detector and their USD defaults.
function moneyDefaultsOf(detector: AnyDetector): Record<string, string> {
  const shape = (detector.params as unknown as { shape?: Record<string, z.ZodType> }).shape ?? {};
  return Object.fromEntries(Object.entries(shape).flatMap(([key, schema]) => (MONEY_PARAMETERS.has(schema) ? [[key, schema.parse(undefined) as string]] : [])));
}

// The parameters a ruleset layer starts from: the money defaults in the tenant's base asset.
export function convertedMoneyDefaults(detector: AnyDetector, defaults: MoneyDefaults = USD): Record<string, string> {
  if (defaults.kind !== 'converted') return {};
  return Object.fromEntries(Object.entries(moneyDefaultsOf(detector)).map(([key, cents]) => [key, defaults.convert(cents)]));
}

// A layer of parameters (a segment override) whose money values are USD defaults too.
export function convertMoneyLayer(detector: AnyDetector, layer: Record<string, unknown>, defaults: MoneyDefaults = USD): Record<string, unknown> {
  if (defaults.kind !== 'converted') return layer;
  const money = moneyDefaultsOf(detector);
  return Object.fromEntries(Object.entries(layer).map(([key, value]) => [key, key in money && typeof value === 'string' ? defaults.convert(value) : value]));
}

// The detector as a tenant without a USD rate runs it: when the ruleset leaves a money parameter
// to its default, there is no threshold in the base asset, so it cannot answer (never a guess).
export function withoutMoneyDefaults(detector: AnyDetector, given: Record<string, unknown>, defaults: MoneyDefaults = USD): AnyDetector {
  if (defaults.kind !== 'unavailable') return detector;
  const missing = Object.keys(moneyDefaultsOf(detector)).filter((key) => !(key in given));
  if (missing.length === 0) return detector;
  const reason = `${defaults.reason}; the ruleset leaves ${missing.join(', ')} to its USD default`;
  return { ...detector, evaluate: () => Promise.resolve(nonResult('insufficient_data', reason)) };
}
