import { describe, expect, it } from 'vitest';
import type { ActivityRecord } from '../../../platform/aggregates/port.ts';
import type { FlowSet } from '../../../platform/graph/port.ts';
import type { SubjectContext } from '../framework/context.ts';
import { activityFeatures, subjectFeatures } from './features.ts';
import { oneLabelPerAccount, parseLabelFile, type AccountLabel } from './labels.ts';
import { seededRandom } from './split.ts';

const at = new Date('2026-03-31T12:00:00Z');
// When a label file is read: every as_of in these files is before it.
const LABELS_NOW = new Date('2026-09-01T00:00:00Z');
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

// A flow set as the graph answers it: its sum, and its top counterparty's.
const flowSet = (sum: bigint, top: bigint | null): FlowSet => ({
  account: 'account:S',
  counterparties: top === null ? [] : [{ account: 'account:T', count: 1, sum: top, unpriced: 0, firstAt: at, lastAt: at }],
  count: top === null ? 0 : 1,
  sum,
  truncated: false,
});
// Just what subjectFeatures reads of a subject's context.
const contextOf = (records: ActivityRecord[], fanIn: FlowSet, fanOut: FlowSet) =>
  ({ at, activities: async () => records, fanIn: async () => fanIn, fanOut: async () => fanOut }) as unknown as SubjectContext;

describe('negative money (reversal legs)', () => {
  it('counts a negative leg as a payment but adds no money, so the balance and pass-through stay in their domain', () => {
    const received = rec('2026-03-30T10:00:00Z', 'in', 5000, 'account:A');
    const reversal = rec('2026-03-30T11:00:00Z', 'out', -3000, 'account:B');
    const f = activityFeatures([received, reversal], at);
    // Counted with its sign: out_sum -3000, flow_balance 4, pass_through -0.6.
    expect(f).toMatchObject({ out_count: 1, out_counterparties: 1, out_sum: 0, out_mean: 0, out_max: 0, in_sum: 5000, flow_balance: 1, pass_through: 0 });
  });

  it('holds every ratio to its domain in the values training and scoring take', async () => {
    const records = [rec('2026-03-30T10:00:00Z', 'in', 5000, 'account:A'), rec('2026-03-30T11:00:00Z', 'out', 1000, 'account:B')];
    // The graph's flow sums net a reversal out, its top counterparty's need not: a share of 7.36.
    const { values } = await subjectFeatures(contextOf(records, flowSet(5_000n, 5_000n), flowSet(1_000n, 7_360n)));
    expect(values).toMatchObject({ in_top_share: 1, out_top_share: 1 });
  });

  it('leaves the values of non-negative money as they were', async () => {
    const random = seededRandom(22);
    const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)]!;
    for (let trial = 0; trial < 200; trial += 1) {
      const records = Array.from({ length: Math.floor(random() * 12) }, (_, i) =>
        rec(new Date(at.getTime() - Math.floor(random() * 100 * 86_400_000)).toISOString(), pick(['in', 'out'] as const), Math.floor(random() * 100_000), pick(['account:A', 'account:B', null]) ?? `${i}`),
      );
      const f = activityFeatures(records, at);
      // The definitions, unclamped, on the money as it is.
      const span = records.filter((r) => r.occurredAt <= at && at.getTime() - r.occurredAt.getTime() < 90 * 86_400_000);
      const sum = (direction: 'in' | 'out') => span.filter((r) => r.direction === direction).reduce((s, r) => s + Number(r.baseValue), 0);
      const [inSum, outSum] = [sum('in'), sum('out')];
      expect([f.in_sum, f.out_sum]).toEqual([inSum, outSum]);
      expect(f.flow_balance).toBe(inSum + outSum > 0 ? (inSum - outSum) / (inSum + outSum) : 0);
      expect(f.pass_through).toBe(Math.max(inSum, outSum) > 0 ? Math.min(inSum, outSum) / Math.max(inSum, outSum) : 0);
      const [inTop, outTop] = [BigInt(Math.floor(random() * inSum)), BigInt(Math.floor(random() * outSum))];
      const { values } = await subjectFeatures(contextOf(records, flowSet(BigInt(inSum), inTop), flowSet(BigInt(outSum), outTop)));
      expect(values).toEqual({ ...f, in_top_share: inSum > 0 ? Number(inTop) / inSum : 0, out_top_share: outSum > 0 ? Number(outTop) / outSum : 0 });
    }
  });
});

describe('label files', () => {
  it('reads accounts and parties, with or without as_of', () => {
    const parsed = parseLabelFile('kind,external_id,label,as_of\naccount,A1,1,2026-02-01T00:00:00Z\nparty,P2,false,\n', LABELS_NOW);
    expect(parsed).toEqual({
      ok: true,
      labels: [
        { kind: 'account', externalId: 'A1', label: true, asOf: new Date('2026-02-01T00:00:00Z'), source: 'file' },
        { kind: 'party', externalId: 'P2', label: false, asOf: null, source: 'file' },
      ],
    });
  });

  it('names every bad row by its line', () => {
    const parsed = parseLabelFile('kind,external_id,label\ninstrument,I1,1\naccount,,0\naccount,A3,maybe\naccount,A4,1,extra\n', LABELS_NOW);
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.issues.map((i) => i.line)).toEqual([2, 3, 4, 5]);
    expect(parsed.issues[2]!.message).toMatch(/label must be/);
  });

  it('refuses an as_of later than now, by its line', () => {
    const now = new Date('2026-03-01T00:00:00Z');
    const parsed = parseLabelFile('kind,external_id,label,as_of\naccount,A1,1,2026-03-01T00:00:00Z\naccount,A2,1,2099-01-01T00:00:00Z\n', now);
    expect(parsed).toEqual({ ok: false, issues: [{ line: 3, message: 'as_of 2099-01-01T00:00:00Z is later than now (2026-03-01T00:00:00.000Z): a label describes an instant that has passed' }] });
  });

  it('refuses a file that is not CSV at the line the parser stopped, without echoing all of it', () => {
    expect(parseLabelFile('kind,external_id,label\naccount,"A1,1\n', LABELS_NOW)).toEqual({
      ok: false,
      issues: [{ line: 2, message: 'not CSV: Quote Not Closed: the parsing is finished with an opening quote at line 2' }],
    });
    const binary = parseLabelFile(`kind,external_id,label\naccount,a"${'\u0000'.repeat(5000)}",1\n`, LABELS_NOW);
    expect(binary).toMatchObject({ ok: false, issues: [{ line: 2, message: expect.stringMatching(/^not CSV: Invalid Opening Quote/) }] });
    if (!binary.ok) expect(binary.issues[0]!.message.length).toBeLessThanOrEqual(210);
  });

  it('says a UTF-16 file is not UTF-8, rather than listing its header as unknown columns', () => {
    const utf16 = Buffer.from('\uFEFFkind,external_id,label\naccount,A1,1\n', 'utf16le').toString('utf8');
    expect(parseLabelFile(utf16, LABELS_NOW)).toEqual({
      ok: false,
      issues: [{ line: 1, message: 'the file is not UTF-8 text (its header holds NUL bytes: UTF-16, or not text at all); save it as CSV in UTF-8' }],
    });
  });

  it('refuses a header without the required columns', () => {
    const parsed = parseLabelFile('account,label\nA1,1\n', LABELS_NOW);
    expect(parsed).toMatchObject({ ok: false, issues: [{ line: 1, message: expect.stringMatching(/missing kind, external_id/) }] });
  });

  it('names the line of a bad row after blank lines', () => {
    for (const newline of ['\n', '\r\n']) {
      const parsed = parseLabelFile(['kind,external_id,label', '', 'account,A1,1', '', '', 'account,A3,maybe', 'party,P4,2', ''].join(newline), LABELS_NOW);
      expect(parsed).toMatchObject({ ok: false, issues: [{ line: 6, message: expect.stringMatching(/label must be/) }, { line: 7 }] });
    }
  });

  it('refuses a column named twice', () => {
    const parsed = parseLabelFile('kind,external_id,label,As_Of,as_of\naccount,A1,1,2026-01-01T00:00:00Z,2026-02-01T00:00:00Z\n', LABELS_NOW);
    expect(parsed).toMatchObject({ ok: false, issues: [{ line: 1, message: expect.stringMatching(/repeated as_of/) }] });
  });

  it('reads kind in any case', () => {
    const parsed = parseLabelFile('kind,external_id,label\nAccount,A1,1\nPARTY,P1,0\n', LABELS_NOW);
    expect(parsed).toMatchObject({ ok: true, labels: [{ kind: 'account', externalId: 'A1' }, { kind: 'party', externalId: 'P1' }] });
  });

  it('takes external ids of up to 256 characters, as the spec allows', () => {
    const long = 'x'.repeat(256);
    expect(parseLabelFile(`kind,external_id,label\naccount,${long},1\n`, LABELS_NOW)).toMatchObject({ ok: true, labels: [{ externalId: long }] });
    expect(parseLabelFile(`kind,external_id,label\naccount,${long}x,1\n`, LABELS_NOW)).toMatchObject({ ok: false, issues: [{ line: 2, message: 'external_id must be 1 to 256 characters' }] });
  });
});

describe('one label per account', () => {
  const label = (account: string, value: boolean, asOf: string | null, source: AccountLabel['source'] = 'file'): AccountLabel => ({ account, label: value, asOf: asOf ? new Date(asOf) : null, source });

  it('keeps a case disposition over the file, then the later instant, then the later row, and names the accounts labelled both ways', () => {
    const { labels, conflicts } = oneLabelPerAccount([
      // A10: cleared in the file (judged at its latest activity), reported by an analyst.
      label('A10', false, null),
      label('A10', true, '2026-03-01T00:00:00Z', 'disposition'),
      // A11: the file's later as_of; a row without as_of counts as latest.
      label('A11', true, '2026-03-01T00:00:00Z'),
      label('A11', false, '2026-01-01T00:00:00Z'),
      label('A12', true, '2026-01-01T00:00:00Z'),
      label('A12', false, null),
      // A13: the same row twice, then its opposite at the same instant: the later row.
      label('A13', true, null),
      label('A13', true, null),
      label('A13', false, null),
      // A14: labels that agree collapse without a word.
      label('A14', true, '2026-01-01T00:00:00Z'),
      label('A14', true, '2026-02-01T00:00:00Z', 'disposition'),
    ]);
    expect(labels).toEqual([
      label('A10', true, '2026-03-01T00:00:00Z', 'disposition'),
      label('A11', true, '2026-03-01T00:00:00Z'),
      label('A12', false, null),
      label('A13', false, null),
      label('A14', true, '2026-02-01T00:00:00Z', 'disposition'),
    ]);
    expect(conflicts.map((c) => [c.account, c.positive, c.negative, c.kept.label])).toEqual([
      ['A10', 1, 1, true],
      ['A11', 1, 1, true],
      ['A12', 1, 1, false],
      ['A13', 2, 1, false],
    ]);
  });
});
