import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SnapshotReader } from '../../platform/aggregates/snapshot.ts';
import type { ActivityRecord } from '../../platform/aggregates/port.ts';
import { startDetectionWorld, type DetectionWorld } from '../../test/support/detection-world.ts';
import type { Prefetched } from './framework/context.ts';
import { LATE_FACT_SPAN_MS, lateFactWork } from './late-facts.ts';
import type { SubjectWork } from './subjects.ts';
import { splitTransfers } from './typologies/behaviour/split_transfers.ts';

const T0 = Date.parse('2026-02-17T07:00:00Z');
const MIN = 60_000;

const row = (minutes: number): ActivityRecord =>
  ({ occurredAt: new Date(T0 + minutes * MIN), movementId: `m${minutes}`, direction: 'out', counterparty: 'A-x', baseValue: 100n }) as ActivityRecord;

// A snapshot of A-1 holding activities at these minutes past T0, answering up to the last minute
// asked plus the look-ahead.
function prefetchedWith(minutes: number[], at: number): Prefetched {
  const rows = minutes.map(row).sort((a, b) => b.occurredAt.getTime() - a.occurredAt.getTime());
  return {
    snapshot: new SnapshotReader({
      subject: { tenantId: 't', kind: 'account', id: 'A-1' },
      from: new Date(T0 - 100 * 86_400_000),
      to: new Date(T0 + at * MIN + LATE_FACT_SPAN_MS),
      rows,
      complete: true,
      firstActivityAt: rows.at(-1)?.occurredAt ?? null,
      lastActivityAtOrBeforeFrom: null,
      counterpartyFirstSeen: new Map(),
    }),
  };
}

const change = { object: 'movement', external_id: 'late' } as SubjectWork['change'];
const work = (minutes: number, trigger: SubjectWork['trigger'] = 'movement', withChange = true): SubjectWork => ({
  tenantId: 't',
  subject: { kind: 'account', id: 'A-1' },
  trigger,
  at: new Date(T0 + minutes * MIN),
  change: withChange ? change : null,
});

describe('lateFactWork', () => {
  it('adds an evaluation at the latest later fact within the span, as a movement, with the late change', () => {
    const added = lateFactWork([work(0)], [prefetchedWith([0, 20, 45, 61], 0)]);
    expect(added).toEqual([{ work: { ...work(45), change }, prefetchedFrom: 0 }]);
  });

  it('adds one for a late control event too: the movements after it were judged without it', () => {
    const added = lateFactWork([work(0, 'control_event')], [prefetchedWith([30], 0)]);
    expect(added.map((a) => [a.work.trigger, a.work.at.getTime()])).toEqual([['movement', T0 + 30 * MIN]]);
  });

  it('adds nothing without a later fact, past the span, or for scheduled work', () => {
    expect(lateFactWork([work(0)], [prefetchedWith([0, -5], 0)])).toEqual([]);
    expect(lateFactWork([work(0)], [prefetchedWith([0, 61], 0)])).toEqual([]);
    expect(lateFactWork([work(0, 'schedule', false)], [prefetchedWith([0, 30], 0)])).toEqual([]);
  });

  it('adds nothing when the batch already evaluates the subject at or after the later fact, and one for several late facts', () => {
    const snapshot = prefetchedWith([0, 10, 30, 50], 50);
    expect(lateFactWork([work(0), work(50)], [snapshot, snapshot])).toEqual([]);
    const twice = lateFactWork([work(0), work(10)], [snapshot, snapshot]);
    expect(twice.map((a) => a.work.at.getTime())).toEqual([T0 + 50 * MIN]);
  });
});

// Facts reaching detection out of event-time order: the payer's last transfer of a burst is
// judged before the two earlier ones arrive. Neither evaluation would see all three without the
// extra one at the latest fact.
describe('a burst whose last transfer is judged first', () => {
  let world: DetectionWorld;

  beforeAll(async () => {
    world = await startDetectionWorld();
    for (const id of ['payer', 'payee']) {
      await world.party(`P-${id}`, {}, '2025-06-01T00:00:00Z');
      await world.account(`A-${id}`, `P-${id}`, {}, '2025-06-01T00:00:00Z');
    }
    await world.settle();
    await world.startDetection({ library: [splitTransfers] });
    const transfer = (i: number, time: string) => ({ id: `burst${i}`, from: ['A-payer', 'P-payer'] as [string, string], to: ['A-payee', 'P-payee'] as [string, string], value: 380 + i, at: `2026-02-17T${time}Z` });
    await world.movements([transfer(2, '07:22:00')]);
    await world.settle();
    await world.movements([transfer(0, '07:02:00'), transfer(1, '07:10:00')]);
    await world.settle();
  });
  afterAll(async () => world?.close());

  it('alerts once the earlier transfers arrive, over a window ending at the last transfer', async () => {
    const { rows } = await world.api.db.pool.query(
      `SELECT subject_id, window_to FROM alerts WHERE tenant_id = 'acme' AND detector_id = 'split_transfers' ORDER BY subject_id`,
    );
    expect(rows.map((r) => r.subject_id)).toEqual(['A-payee', 'A-payer']);
    for (const r of rows) expect(r.window_to.toISOString()).toBe('2026-02-17T07:22:00.000Z');
  });
});
