import { describe, expect, it } from 'vitest';
import type { ActivityRecord } from '../../../platform/aggregates/port.ts';
import { activityFeatures } from './features.ts';
import { parseLabelFile } from './labels.ts';

const at = new Date('2026-03-31T12:00:00Z');
const rec = (iso: string, direction: 'in' | 'out', cents: number, counterparty: string | null): ActivityRecord => ({
  movementId: `m-${iso}-${direction}-${counterparty}`,
  direction,
  occurredAt: new Date(iso),
  amount: { value: BigInt(cents), scale: 2, asset: 'USD' },
  baseValue: BigInt(cents),
  cash: false,
  counterparty,
  counterpartyCountry: null,
  corridor: null,
});

describe('activity features', () => {
  it('describes the 90 days up to the instant, worked out by hand', () => {
    const records = [
      rec('2026-03-31T10:00:00Z', 'in', 1000, 'account:A'),
      rec('2026-03-31T09:00:00Z', 'in', 3000, 'account:A'),
      rec('2026-03-31T08:00:00Z', 'in', 2000, 'account:B'),
      rec('2026-03-20T08:00:00Z', 'out', 4000, 'account:C'),
      // Outside the span: after the instant (not yet happened) and more than 90 days before.
      rec('2026-03-31T13:00:00Z', 'in', 999_999, 'account:Z'),
      rec('2025-12-31T11:00:00Z', 'out', 999_999, 'account:Y'),
    ];
    const f = activityFeatures(records, at);
    expect(f).toEqual({
      in_count: 3,
      out_count: 1,
      in_sum: 6000,
      out_sum: 4000,
      in_mean: 2000,
      out_mean: 4000,
      in_max: 3000,
      out_max: 4000,
      in_counterparties: 2,
      out_counterparties: 1,
      active_days: 2,
      max_same_counterparty_day: 2,
      max_in_day: 3,
      max_out_day: 1,
      last_day_in: 3,
      last_day_out: 0,
      flow_balance: (6000 - 4000) / 10000,
      pass_through: 4000 / 6000,
    });
  });

  it('is all zeros without activity', () => {
    expect(Object.values(activityFeatures([], at)).every((v) => v === 0)).toBe(true);
  });
});

describe('label files', () => {
  it('reads accounts and parties, with or without as_of', () => {
    const parsed = parseLabelFile('kind,external_id,label,as_of\naccount,A1,1,2026-02-01T00:00:00Z\nparty,P2,false,\n');
    expect(parsed).toEqual({
      ok: true,
      labels: [
        { kind: 'account', externalId: 'A1', label: true, asOf: new Date('2026-02-01T00:00:00Z'), source: 'file' },
        { kind: 'party', externalId: 'P2', label: false, asOf: null, source: 'file' },
      ],
    });
  });

  it('names every bad row by its line', () => {
    const parsed = parseLabelFile('kind,external_id,label\ninstrument,I1,1\naccount,,0\naccount,A3,maybe\naccount,A4,1,extra\n');
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.issues.map((i) => i.line)).toEqual([2, 3, 4, 5]);
    expect(parsed.issues[2]!.message).toMatch(/label must be/);
  });

  it('refuses a header without the required columns', () => {
    const parsed = parseLabelFile('account,label\nA1,1\n');
    expect(parsed).toMatchObject({ ok: false, issues: [{ line: 1, message: expect.stringMatching(/missing kind, external_id/) }] });
  });
});
