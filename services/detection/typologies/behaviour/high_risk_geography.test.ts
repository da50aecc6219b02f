import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDetectionWorld, type DetectionWorld, type MovementSpec } from '../../../../test/support/detection-world.ts';
import { highRiskGeography } from './high_risk_geography.ts';

const AT = '2026-08-20T16:00:00Z';

describe('high_risk_geography', () => {
  let world: DetectionWorld;
  beforeAll(async () => {
    world = await startDetectionWorld();
    for (const n of [1, 2, 3, 4, 5]) {
      await world.party(`hg-p${n}`);
      await world.account(`hg-a${n}`, `hg-p${n}`, n === 4 ? { jurisdiction: 'IR' } : {});
    }
    await world.party('hg-us');
    await world.account('hg-us-a', 'hg-us');
    const abroad = (id: string, n: number, value: number, country: string, at: string): MovementSpec =>
      ({ id, from: [`hg-a${n}`, `hg-p${n}`], to: [null, null], value, at, toCountry: country, type: 'remittance' });
    await world.movements([
      abroad('hg-m1', 1, 60_000, 'IR', '2026-08-01T10:00:00Z'),
      abroad('hg-m2', 1, 80_000, 'IR', '2026-08-15T10:00:00Z'),
      abroad('hg-m3', 1, 500_000, 'GB', '2026-08-16T10:00:00Z'),
      // Outside the 30 days.
      abroad('hg-m4', 1, 900_000, 'IR', '2026-07-10T10:00:00Z'),
      abroad('hg-s1', 2, 150_000, 'SY', '2026-08-15T10:00:00Z'),
      abroad('hg-n1', 3, 99_999, 'IR', '2026-08-15T10:00:00Z'),
      abroad('hg-n2', 3, 5_000_000, 'GB', '2026-08-15T10:00:00Z'),
      // An account held in a listed jurisdiction paying a domestic-looking counterparty.
      { id: 'hg-c1', from: ['hg-a4', 'hg-p4'], to: ['hg-us-a', 'hg-us'], value: 300_000, at: '2026-08-15T10:00:00Z' },
      abroad('hg-n3', 5, 5_000_000, 'NG', '2026-08-15T10:00:00Z'),
    ]);
    await world.settle();
  });
  afterAll(async () => world?.close());

  it('hits on money sent to a call-for-action jurisdiction over 30 days', async () => {
    const outcome = await world.evaluate(highRiskGeography, { kind: 'account', id: 'hg-a1' }, AT);
    expect(outcome).toMatchObject({
      outcome: 'hit',
      severity: 'medium',
      evidence: {
        movements: ['hg-m2', 'hg-m1'],
        amounts: { total: '140000', count: 2, out: '140000', in: '0' },
        thresholds: [
          { name: 'listed_jurisdiction_movements', threshold: 1, observed: 2 },
          { name: 'listed_jurisdiction_sum', threshold: '100000', observed: '140000' },
        ],
        window: { from: '2026-07-21T16:00:00.000Z', to: '2026-08-20T16:00:00.000Z' },
        facts: { jurisdictions: { IR: { count: 2, sum: '140000' } }, callForAction: ['IR'] },
      },
    });
  });

  it('grades a monitored jurisdiction as a weak signal, and sees a listed end of the corridor', async () => {
    expect(await world.evaluate(highRiskGeography, { kind: 'account', id: 'hg-a2' }, AT)).toMatchObject({ outcome: 'hit', severity: 'low', evidence: { movements: ['hg-s1'] } });
    expect(await world.evaluate(highRiskGeography, { kind: 'account', id: 'hg-us-a' }, AT)).toMatchObject({
      outcome: 'hit',
      evidence: { movements: ['hg-c1'], counterparties: ['account:hg-a4'], facts: { jurisdictions: { IR: { count: 1 } } } },
    });
  });

  it('does not hit under the minimum sum, nor on unlisted jurisdictions', async () => {
    expect(await world.evaluate(highRiskGeography, { kind: 'account', id: 'hg-a3' }, AT)).toEqual({ outcome: 'no_hit' });
    expect(await world.evaluate(highRiskGeography, { kind: 'account', id: 'hg-a5' }, AT)).toEqual({ outcome: 'no_hit' });
    // The operator's own list decides.
    expect(await world.evaluate(highRiskGeography, { kind: 'account', id: 'hg-a5' }, AT, { params: { countries: ['NG'] } })).toMatchObject({ outcome: 'hit', evidence: { movements: ['hg-n3'] } });
  });
});
