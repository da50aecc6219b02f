// Rules between a detector's parameters, or on a parameter's value, that their own bounds cannot
// say: broken, they make the detector answer insufficient_data for ever, never fire, or fire on
// every movement, without a word. A new ruleset document that breaks one is refused with the
// parameter's path (compileRuleset). A stored one keeps compiling as it did when it was accepted:
// refusing it now would stop detection for its tenant altogether.
export interface ParameterRule {
  holds: (params: Record<string, unknown>) => boolean;
  path: string;
  message: string;
}

// `lower` may not exceed `upper` (a minimum history longer than the history read; a lowest ratio
// above the highest). Both are number parameters.
export function notAbove(lower: string, upper: string): ParameterRule {
  return { holds: (p) => (p[lower] as number) <= (p[upper] as number), path: lower, message: `must not exceed ${upper}` };
}

// Money parameters (decimal strings of minor units): `lower` strictly below `upper`.
export function below(lower: string, upper: string): ParameterRule {
  return { holds: (p) => BigInt(p[lower] as string) < BigInt(p[upper] as string), path: lower, message: `must be below ${upper}` };
}

// A money parameter above zero: a threshold of nothing is crossed by every movement.
export function aboveZero(name: string): ParameterRule {
  return { holds: (p) => BigInt(p[name] as string) > 0n, path: name, message: 'must be above zero' };
}
