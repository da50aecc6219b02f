import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SnapshotReader } from '../../platform/aggregates/snapshot.ts';
import type { ActivityRecord } from '../../platform/aggregates/port.ts';
import { startDetectionWorld, type DetectionWorld } from '../../test/support/detection-world.ts';
import type { Prefetched } from '../../services/detection/framework/context.ts';
import { LATE_FACT_SPAN_MS, placeLateFacts } from './late-facts.ts';
import type { SubjectWork } from '../../services/detection/subjects.ts';
import { splitTransfers } from '../../services/detection/typologies/behaviour/split_transfers.ts';

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

describe('placeLateFacts', () => {
  const instants = (placed: ReturnType<typeof placeLateFacts>) => placed.map((p) => [p.work.trigger, (p.work.at.getTime() - T0) / MIN, p.prefetchedFrom]);

  it('moves a movement\'s evaluation to the latest later fact within the span, keeping the late change', () => {
    const placed = placeLateFacts([work(0)], [prefetchedWith([0, 20, 45, 61], 0)]);
    expect(placed).toEqual([{ work: { ...work(45), change }, prefetchedFrom: 0 }]);
  });

  it('keeps a late control event\'s evaluation and adds one as a movement at the later fact', () => {
    expect(instants(placeLateFacts([work(0, 'control_event')], [prefetchedWith([30], 0)]))).toEqual([
      ['control_event', 0, 0],
      ['movement', 30, 0],
    ]);
  });

  it('leaves work alone without a later fact, past the span, and scheduled work', () => {
    expect(instants(placeLateFacts([work(0)], [prefetchedWith([0, -5], 0)]))).toEqual([['movement', 0, 0]]);
    expect(instants(placeLateFacts([work(0)], [prefetchedWith([0, 61], 0)]))).toEqual([['movement', 0, 0]]);
    // Exactly the span later: the 1 h window there would not hold the late fact.
    expect(instants(placeLateFacts([work(0)], [prefetchedWith([0, 60], 0)]))).toEqual([['movement', 0, 0]]);
    expect(instants(placeLateFacts([work(0, 'schedule', false)], [prefetchedWith([0, 30], 0)]))).toEqual([['schedule', 0, 0]]);
  });

  it('evaluates a subject once where two late facts lead to the same later one', () => {
    const snapshot = prefetchedWith([0, 10, 30, 50], 50);
    expect(instants(placeLateFacts([work(0), work(10)], [snapshot, snapshot]))).toEqual([['movement', 50, 0]]);
    expect(instants(placeLateFacts([work(0), work(50)], [snapshot, snapshot]))).toEqual([['movement', 50, 0]]);
  });
});

// Facts reaching detection out of event-time order: the payer's last transfer of a burst is
// judged before the two earlier ones arrive. Judged at their own instants, the earlier ones would
// never be seen with the last.
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
