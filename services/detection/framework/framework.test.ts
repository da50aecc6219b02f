import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { countingAggregates, startDetectionWorld, type DetectionWorld } from '../../../test/support/detection-world.ts';
import { defineDetector, noHit, type DetectorOutcome } from './detector.ts';
import { compileRuleset, defaultRulesetDocument } from './ruleset.ts';
import { DETECTOR_LIBRARY } from '../library.ts';
import { SubjectContext } from './context.ts';

// A detector that reports what it saw, so the framework's part can be checked on its own.
const echo = defineDetector({
  id: 'echo',
  typology: 'test',
  version: 1,
  subjects: ['account', 'party'],
  triggers: ['movement'],
  needs: [{ family: 'party', maxAgeDays: 30 }, { family: 'movement' }],
  windows: ['24h'],
  params: z.strictObject({ limit: z.number().int().default(10), label: z.string().default('base') }),
  segmentDefaults: { cash_agent: { limit: 50 } },
  async evaluate(ctx, params): Promise<DetectorOutcome> {
    const day = await ctx.window('24h');
    if (day.out.count === 0) return noHit();
    return {
      outcome: 'hit',
      score: 1,
      severity: 'low',
      summary: `${params.label}:${params.limit}`,
      evidence: { movements: [], counterparties: [], amounts: { total: day.out.sum.toString(), count: day.out.count, asset: ctx.baseAsset }, window: { from: day.from.toISOString(), to: day.to.toISOString() }, thresholds: [] },
    };
  },
});

describe('rulesets', () => {
  it('resolve parameters per segment and risk tier, the tier winning', () => {
    const compiled = compileRuleset(3, {
      name: 'r',
      detectors: { echo: { params: { label: 'x' }, by_segment: { merchant: { limit: 20 } }, by_risk_tier: { high: { limit: 5 } } } },
    }, [echo]);
    if (!compiled.ok) throw new Error(JSON.stringify(compiled.issues));
    const [configured] = compiled.ruleset.detectors;
    expect(configured!.paramsFor(undefined, undefined)).toEqual({ limit: 10, label: 'x' });
    expect(configured!.paramsFor('merchant', undefined)).toEqual({ limit: 20, label: 'x' });
    expect(configured!.paramsFor('merchant', 'high')).toEqual({ limit: 5, label: 'x' });
    expect(configured!.paramsFor('consumer', 'standard')).toEqual({ limit: 10, label: 'x' });
  });

  it('refuse unknown detectors and bad parameters, with the path of each', () => {
    const compiled = compileRuleset(1, {
      name: 'r',
      detectors: { nope: {}, echo: { params: { limit: 'ten' }, by_risk_tier: { high: { extra: 1 } } } },
    }, [echo]);
    expect(compiled.ok).toBe(false);
    if (compiled.ok) return;
    expect(compiled.issues.map((i) => i.path)).toEqual(expect.arrayContaining(['detectors.nope', 'detectors.echo.params.limit', 'detectors.echo.by_risk_tier.high']));
  });

  it('refuse parameters that contradict each other, which would silence a detector or make it fire on everything', () => {
    const compiled = compileRuleset(1, {
      name: 'r',
      detectors: {
        velocity_spike: { params: { minBaselineDays: 120, baselineDays: 90 } },
        pass_through: { params: { minRatio: 1.5 } },
        scatter_gather: { by_segment: { merchant: { minGatherRatio: 3 } } },
        structuring: { params: { margin: '1000000' } },
        large_cash_aggregate: { params: { threshold24h: '0' } },
      },
    }, DETECTOR_LIBRARY);
    expect(compiled.ok).toBe(false);
    if (compiled.ok) return;
    expect(compiled.issues).toEqual(expect.arrayContaining([
      { path: 'detectors.velocity_spike.params.minBaselineDays', message: 'must not exceed baselineDays' },
      { path: 'detectors.pass_through.params.minRatio', message: 'must not exceed maxRatio' },
      { path: 'detectors.scatter_gather.by_segment.merchant.minGatherRatio', message: 'must not exceed maxGatherRatio' },
      { path: 'detectors.structuring.params.margin', message: 'must be below threshold' },
      { path: 'detectors.large_cash_aggregate.params.threshold24h', message: 'must be above zero' },
    ]));
    expect(compileRuleset(0, defaultRulesetDocument(DETECTOR_LIBRARY), DETECTOR_LIBRARY).ok).toBe(true);
    // A document stored before a rule existed still compiles: refusing it would stop its tenant's
    // detection altogether (services/detection/rulesets/active.ts).
    const stored = compileRuleset(1, { name: 'r', detectors: { pass_through: { params: { minRatio: 1.5 } } } }, DETECTOR_LIBRARY, { rules: false });
    expect(stored.ok).toBe(true);
  });

  it('leave out disabled detectors, and the default ruleset carries segment defaults', () => {
    const off = compileRuleset(1, { name: 'r', detectors: { echo: { enabled: false } } }, [echo]);
    expect(off.ok && off.ruleset.detectors).toEqual([]);
    const defaults = compileRuleset(0, defaultRulesetDocument([echo]), [echo]);
    if (!defaults.ok) throw new Error('default ruleset does not compile');
    expect(defaults.ruleset.detectors[0]!.paramsFor('cash_agent', undefined)).toEqual({ limit: 50, label: 'base' });
  });
});

describe('evaluation', () => {
  let world: DetectionWorld;
  beforeAll(async () => {
    world = await startDetectionWorld();
    await world.party('p-old', {}, '2026-01-01T00:00:00Z');
    await world.party('p-new', {}, '2026-08-20T00:00:00Z');
    await world.account('a-new', 'p-new', {}, '2026-08-20T00:00:00Z');
    await world.movement({ id: 'm1', from: ['a-new', 'p-new'], to: [null, null], value: 500, at: '2026-08-25T10:00:00Z' });
    await world.settle();
  });
  afterAll(async () => world?.close());

  it('answers insufficient_data when the subject has no party data', async () => {
    expect(await world.evaluate(echo, { kind: 'party', id: 'p-unknown' }, '2026-08-25T12:00:00Z')).toMatchObject({ outcome: 'insufficient_data' });
  });

  it('answers stale when the party data is older than the detector accepts', async () => {
    expect(await world.evaluate(echo, { kind: 'party', id: 'p-old' }, '2026-08-25T12:00:00Z')).toMatchObject({ outcome: 'stale' });
  });

  it('runs the detector on fresh data, in event time', async () => {
    const hit = await world.evaluate(echo, { kind: 'account', id: 'a-new' }, '2026-08-25T12:00:00Z');
    expect(hit).toMatchObject({ outcome: 'hit', summary: 'base:10', evidence: { amounts: { total: '500', count: 1 } } });
    // Before the movement happened, in event time, there was nothing to see.
    expect(await world.evaluate(echo, { kind: 'account', id: 'a-new' }, '2026-08-25T09:00:00Z')).toEqual({ outcome: 'no_hit' });
  });

  it('reads a window once per evaluation, however many detectors ask for it', async () => {
    const { store, calls } = countingAggregates(world);
    const ctx = new SubjectContext({ ...world.stores, aggregates: store }, world.api.tenantId, 'USD', { kind: 'account', id: 'a-new' }, new Date('2026-08-25T12:00:00Z'));
    // One promise for every read of it, made by the first.
    expect(ctx.window('24h')).toBe(ctx.window('24h'));
    const [first, second] = await Promise.all([ctx.window('24h'), ctx.window('24h')]);
    expect(second).toBe(first);
    expect(await ctx.window('24h')).toBe(first);
    expect(first.out).toMatchObject({ count: 1, sum: 500n });
    expect(calls.get('windows')).toBe(1);
    // The same window with options is another read.
    expect((await ctx.window('24h', { roundMajorUnits: 5 })).roundAmounts.count).toBe(1);
    expect(calls.get('windows')).toBe(2);
  });

  it('is not applicable to a trigger the detector does not declare', async () => {
    expect(await world.evaluate(echo, { kind: 'account', id: 'a-new' }, '2026-08-25T12:00:00Z', { trigger: 'control_event' })).toMatchObject({ outcome: 'not_applicable' });
  });
});
