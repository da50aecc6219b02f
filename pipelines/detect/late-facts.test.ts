import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SnapshotReader } from '../../platform/aggregates/snapshot.ts';
import type { Activity, ActivityRecord } from '../../platform/aggregates/port.ts';
import { startDetectionWorld, type DetectionWorld } from '../../test/support/detection-world.ts';
import type { Prefetched } from '../../services/detection/framework/context.ts';
import { factsAhead, LATE_FACT_SPAN_MS, placeLateFacts } from './late-facts.ts';
import { markJudged, subjectKey } from './judged.ts';
import type { SubjectWork } from '../../services/detection/subjects.ts';
import { splitTransfers } from '../../services/detection/typologies/behaviour/split_transfers.ts';
import { structuring } from '../../services/detection/typologies/behaviour/structuring.ts';

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

// A payment of 1.00 USD into the subject, recorded in the aggregate store as its pipeline would.
const activityOf = (subject: Activity['subject'], movementId: string, occurredAt: Date): Activity => ({
  subject,
  movementId,
  eventId: randomUUID(),
  direction: 'in',
  occurredAt,
  amount: { value: 100n, scale: 2, asset: 'USD' },
  baseValue: 100n,
  cash: false,
  counterparty: null,
  counterpartyCountry: null,
  corridor: null,
});
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

// The late fact lies more than the span before the facts already judged: a week's structuring
// whose first payment arrives last (found by a black-box audit: no alert until an unrelated
// payment came).
describe('a structured payment sent a day late', () => {
  let world: DetectionWorld;

  beforeAll(async () => {
    world = await startDetectionWorld();
    await world.party('P-late', {}, '2025-06-01T00:00:00Z');
    await world.account('A-late', 'P-late', {}, '2025-06-01T00:00:00Z');
    await world.settle();
    await world.startDetection({ library: [structuring] });
    const cash = (id: string, at: string) => ({ id, from: [null, null] as [null, null], to: ['A-late', 'P-late'] as [string, string], value: 930_000, at, type: 'cash_in' as const });
    await world.movements([cash('late-2', '2026-02-12T11:00:00Z'), cash('late-3', '2026-02-13T08:00:00Z')]);
    await world.settle();
    await world.movements([cash('late-1', '2026-02-10T11:00:00Z')]);
    await world.settle();
  });
  afterAll(async () => world?.close());

  it('alerts over a window ending at the latest payment, holding all three', async () => {
    const { rows } = await world.api.db.pool.query(
      `SELECT a.subject_kind, a.subject_id, a.window_to,
              (SELECT e.evidence->'movements' FROM alert_evidence e
                WHERE e.tenant_id = a.tenant_id AND e.alert_id = a.alert_id ORDER BY e.seq DESC LIMIT 1) AS movements
         FROM alerts a
        WHERE a.tenant_id = 'acme' AND a.detector_id = 'structuring' ORDER BY a.subject_kind`,
    );
    expect(rows.map((r) => [r.subject_kind, r.subject_id, r.window_to.toISOString(), [...r.movements].sort()])).toEqual([
      ['account', 'A-late', '2026-02-13T08:00:00.000Z', ['late-1', 'late-2', 'late-3']],
      ['party', 'P-late', '2026-02-13T08:00:00.000Z', ['late-1', 'late-2', 'late-3']],
    ]);
  });

  it('leaves a later fact not judged yet to its own evaluation', async () => {
    // A fact a day ahead is in the stores, later than any fact detection has judged (as when
    // detection runs behind the stores): the earlier payment is judged at its own instant only.
    await world.party('P-behind', {}, '2025-06-01T00:00:00Z');
    await world.settle();
    await world.stores.aggregates.record([activityOf({ tenantId: 'acme', kind: 'party', id: 'P-behind' }, 'behind-ahead', new Date('2026-02-14T11:00:00Z'))]);
    await world.movements([{ id: 'behind-1', from: [null, null], to: [null, 'P-behind'], value: 930_000, at: '2026-02-13T09:00:00Z', type: 'cash_in' }]);
    await world.settle();
    const { rows } = await world.api.db.pool.query(`SELECT event_at FROM subject_evaluations WHERE tenant_id = 'acme' AND subject_kind = 'party' AND subject_id = 'P-behind' AND mode = 'live'`);
    expect(rows.map((r) => r.event_at.toISOString())).toEqual(['2026-02-13T09:00:00.000Z']);
  });

  it('judges again at a later fact that another detect process has begun to judge', async () => {
    // Another process marked the subject before reading the stores for the later fact, and may
    // have read them before the earlier payment was recorded: its evaluation may lack it.
    await world.party('P-other', {}, '2025-06-01T00:00:00Z');
    await world.settle();
    const ahead = new Date('2026-02-14T11:00:00Z');
    await world.stores.aggregates.record([activityOf({ tenantId: 'acme', kind: 'party', id: 'P-other' }, 'other-ahead', ahead)]);
    await markJudged(world.api.db.pool, [{ tenantId: 'acme', subject: { kind: 'party', id: 'P-other' }, at: ahead }], 0);
    await world.movements([{ id: 'other-1', from: [null, null], to: [null, 'P-other'], value: 930_000, at: '2026-02-13T09:00:00Z', type: 'cash_in' }]);
    await world.settle();
    const { rows } = await world.api.db.pool.query(`SELECT event_at FROM subject_evaluations WHERE tenant_id = 'acme' AND subject_kind = 'party' AND subject_id = 'P-other' AND mode = 'live'`);
    expect(rows.map((r) => r.event_at.toISOString())).toEqual(['2026-02-14T11:00:00.000Z']);
  });
});

describe('factsAhead', () => {
  let world: DetectionWorld;
  const DAY = 86_400_000;
  const at = (days: number) => new Date(T0 + days * DAY);
  const account = (id: string) => ({ tenantId: 'acme', kind: 'account' as const, id });
  const item = (id: string, days: number, trigger: SubjectWork['trigger'] = 'movement', withChange = true): SubjectWork => ({
    tenantId: 'acme',
    subject: { kind: 'account', id },
    trigger,
    at: at(days),
    change: withChange ? change : null,
  });
  const found = (ahead: SubjectWork[]) => ahead.map((w) => [w.subject.id, w.trigger, (w.at.getTime() - T0) / DAY]).sort();

  beforeAll(async () => {
    world = await startDetectionWorld();
    const activity = (id: string, days: number) => activityOf(account(id), `${id}-${days}`, at(days));
    // A-ahead: facts half an hour, 2 days, 20 days and 80 days after day 0. A-near: only within
    // the span. A-far: only 100 days later, past every window. A-close: 5 hours and 2 days later.
    await world.stores.aggregates.record([
      ...[0, 1 / 48, 2, 20, 80].map((d) => activity('A-ahead', d)),
      ...[0, 5 / 24, 2].map((d) => activity('A-close', d)),
      ...[0, 1 / 48].map((d) => activity('A-near', d)),
      ...[0, 100].map((d) => activity('A-far', d)),
    ]);
  });
  afterAll(async () => world?.close());

  // How far each subject was judged, as markJudged answers.
  const judged = (to: Record<string, number>) => new Map(Object.entries(to).map(([id, days]) => [subjectKey({ tenantId: 'acme', subject: { kind: 'account', id } }), at(days)]));
  const everywhere = judged({ 'A-ahead': 1000, 'A-near': 1000, 'A-far': 1000 });

  it('judges at the latest fact within each longer window, each instant once', async () => {
    // 24 h: nothing past the span; 7 d: day 2; 30 d: day 20; 90 d: day 80.
    expect(found(await factsAhead(world.stores.aggregates, [item('A-ahead', 0), item('A-ahead', 0, 'control_event')], everywhere))).toEqual([
      ['A-ahead', 'movement', 2],
      ['A-ahead', 'movement', 20],
      ['A-ahead', 'movement', 80],
    ]);
    // From day 2: day 20 for 30 d, and 80 for 90 d; 7 d and 24 h hold nothing further.
    expect(found(await factsAhead(world.stores.aggregates, [item('A-ahead', 2)], everywhere))).toEqual([
      ['A-ahead', 'movement', 20],
      ['A-ahead', 'movement', 80],
    ]);
  });

  // Day 2 is the latest within 90, 30 and 7 days; the 24-hour window's latest, 5 hours on, was
  // left out, so a 24-hour detector never saw the late fact beside it (an alert raised in order was
  // missed out of order).
  it('judges at a shorter window\'s latest fact when a longer window\'s latest is further', async () => {
    expect(found(await factsAhead(world.stores.aggregates, [item('A-close', 0)], judged({ 'A-close': 1000 })))).toEqual([
      ['A-close', 'movement', 5 / 24],
      ['A-close', 'movement', 2],
    ]);
    // Judged only up to the 5-hour fact: day 2 will be judged with the late one in its windows.
    expect(found(await factsAhead(world.stores.aggregates, [item('A-close', 0)], judged({ 'A-close': 5 / 24 })))).toEqual([['A-close', 'movement', 5 / 24]]);
  });

  it('judges only at facts the subject was judged at or beyond', async () => {
    expect(found(await factsAhead(world.stores.aggregates, [item('A-ahead', 0)], judged({ 'A-ahead': 20 })))).toEqual([
      ['A-ahead', 'movement', 2],
      ['A-ahead', 'movement', 20],
    ]);
    // Judged only within the span of the fact, or never: nothing.
    expect(await factsAhead(world.stores.aggregates, [item('A-ahead', 0)], judged({ 'A-ahead': 1 / 24 }))).toEqual([]);
    expect(await factsAhead(world.stores.aggregates, [item('A-ahead', 0)], new Map())).toEqual([]);
  });

  it('finds nothing within the span, past the longest window, at the latest fact, or for scheduled work', async () => {
    expect(await factsAhead(world.stores.aggregates, [item('A-near', 0), item('A-far', 0), item('A-ahead', 80), item('A-ahead', 0, 'schedule', false)], everywhere)).toEqual([]);
  });
});
