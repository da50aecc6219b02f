import { describe, expect, it } from 'vitest';
import { compileRuleset, defaultRulesetDocument } from '../../framework/ruleset.ts';
import { NETWORK_DETECTORS } from './index.ts';

describe('network detectors', () => {
  it('have distinct ids, parse their defaults, and compile with their segment defaults', () => {
    const ids = NETWORK_DETECTORS.map((d) => d.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual(['fan_in', 'fan_out', 'pass_through', 'round_tripping', 'scatter_gather', 'gather_scatter', 'mule_network']);
    for (const detector of NETWORK_DETECTORS) expect(() => detector.params.parse({}), detector.id).not.toThrow();
    const compiled = compileRuleset(0, defaultRulesetDocument(NETWORK_DETECTORS), NETWORK_DETECTORS);
    expect(compiled.ok ? [] : compiled.issues).toEqual([]);
  });
});
