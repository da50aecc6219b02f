// Episodes as recordHits and assignEpisodes leave them, on a small real network: p1 holds a1, p2
// holds a2, and a1 paid a2 (so each account reaches the other within the policy's two hops).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withTransaction } from '../../platform/postgres/pool.ts';
import { startDetectionWorld, type DetectionWorld } from '../../test/support/detection-world.ts';
import type { Severity } from '../../services/detection/framework/detector.ts';
import { recordHits, type HitToRecord } from './alerts.ts';
import { assignEpisodes, raiseEpisodes, spanEpisodes, type AssignedEpisodes } from './episodes.ts';
import { probeDetector } from './probe-detector.test-kit.ts';

const first = probeDetector('probe_one');
const second = probeDetector('probe_two');
const third = probeDetector('probe_three');

let world: DetectionWorld;
beforeAll(async () => {
  world = await startDetectionWorld();
  await world.party('p1');
  await world.party('p2');
  await world.account('a1', 'p1');
  await world.account('a2', 'p2');
  await world.movement({ id: 'm1', from: ['a1', 'p1'], to: ['a2', 'p2'], value: 1_000, at: '2026-08-01T09:00:00Z' });
  await world.settle();
});
afterAll(async () => world?.close());

// A hit of `detector` on an account (held by `party`) over [from, to], judged at `to`.
const hit = (detector: ReturnType<typeof probeDetector>, account: string, party: string, from: string, to: string, movements: string[], severity: Severity = 'medium', score = 0.5): HitToRecord => ({
  tenantId: world.api.tenantId,
  mode: 'live',
  rulesetVersion: 1,
  detector,
  subject: { kind: 'account', id: account },
  partyId: party,
  hit: {
    outcome: 'hit',
    score,
    severity,
    summary: `${severity} ${score}`,
    evidence: { movements, counterparties: [], amounts: { total: '1', count: movements.length, asset: 'USD' }, window: { from, to }, thresholds: [] },
  },
  explanation: `${severity} ${score}`,
  eventAt: new Date(to),
});

const now = new Date('2026-09-15T00:00:00Z');

// Records the hits and does with them what the detect pipeline's commit does with episodes.
async function commit(hits: HitToRecord[]) {
  return withTransaction(world.api.db.pool, async (db) => {
    const recorded = await recordHits(db, hits, now);
    const assigned = await assignEpisodes(db, world.stores.graph, recorded.opened, now);
    const raised = await raiseEpisodes(db, recorded.raised, now);
    await spanEpisodes(db, recorded.extended, now);
    const parties = new Set([...assigned.parties, ...raised.parties]);
    return { recorded, assigned: { ...assigned, parties } as AssignedEpisodes };
  });
}

// The episode of the alert of `detector` on `account` whose window holds the instant `at`.
const episodeOf = async (detector: string, account: string, at: string) => {
  const { rows } = await world.api.db.pool.query(
    `SELECT e.episode_id, e.status, e.severity, e.first_alert_at, e.last_alert_at FROM alerts a JOIN episodes e USING (tenant_id, episode_id)
      WHERE a.tenant_id = $1 AND a.detector_id = $2 AND a.subject_id = $3 AND a.window_from <= $4 AND a.window_to >= $4`,
    [world.api.tenantId, detector, account, at],
  );
  expect(rows).toHaveLength(1);
  return rows[0];
};

// Each test works in a time of its own, far from the others' (an episode's horizon is 30 days).
describe('episodes', () => {
  it('groups an alert opened and strengthened in one commit at its strongest hit, and announces it so', async () => {
    const { recorded } = await commit([
      hit(first, 'a1', 'p1', '2026-01-05T10:00:00Z', '2026-01-05T10:00:00Z', ['x1'], 'medium', 0.5),
      hit(first, 'a1', 'p1', '2026-01-05T10:00:00Z', '2026-01-05T13:00:00Z', ['x1', 'x2'], 'high', 0.8),
    ]);
    expect(recorded.opened.map((o) => o.severity)).toEqual(['high']);
    expect(recorded.events.map((e) => [e.type, (e.data as { severity: string }).severity, (e.data as { score: number }).score])).toEqual([['alert.opened', 'high', 0.8]]);
    expect((recorded.events[0]!.data as { window: unknown }).window).toEqual({ from: '2026-01-05T10:00:00Z', to: '2026-01-05T13:00:00Z' });
    expect(await episodeOf('probe_one', 'a1', '2026-01-05T10:00:00Z')).toMatchObject({ severity: 'high', status: 'escalated' });
  });

  it("recomputes every subject party's posture when a joined episode grows more severe", async () => {
    await commit([hit(first, 'a1', 'p1', '2026-08-02T10:00:00Z', '2026-08-02T10:00:00Z', ['y1'])]);
    // a2 is within reach of a1: its alert joins a1's episode, at the same severity.
    const joined = await commit([hit(first, 'a2', 'p2', '2026-08-03T10:00:00Z', '2026-08-03T10:00:00Z', ['y2'])]);
    expect([...joined.assigned.parties]).toEqual(['p2']);
    // A high alert on a2 raises the episode: p1's band follows it as well as p2's.
    const raised = await commit([hit(second, 'a2', 'p2', '2026-08-04T10:00:00Z', '2026-08-04T10:00:00Z', ['y3'], 'high', 0.9)]);
    expect([...raised.assigned.parties].sort()).toEqual(['p1', 'p2']);
    expect((await episodeOf('probe_two', 'a2', '2026-08-04T10:00:00Z')).episode_id).toBe((await episodeOf('probe_one', 'a1', '2026-08-02T10:00:00Z')).episode_id);
  });

  it('keeps an episode active while its alert is extended, and groups by event time on both sides of the horizon', async () => {
    await commit([hit(first, 'a1', 'p1', '2026-05-01T10:00:00Z', '2026-05-01T10:00:00Z', ['z1'])]);
    // The same alert, hit again and again over five weeks.
    await commit([hit(first, 'a1', 'p1', '2026-05-01T10:00:00Z', '2026-06-05T10:00:00Z', ['z1', 'z2'])]);
    const kept = await episodeOf('probe_one', 'a1', '2026-05-01T10:00:00Z');
    expect(kept.last_alert_at.toISOString()).toBe('2026-06-05T10:00:00.000Z');
    // A new alert 40 days after the episode opened, 5 after its alert's last hit: the same episode.
    await commit([hit(second, 'a1', 'p1', '2026-06-10T10:00:00Z', '2026-06-10T10:00:00Z', ['z3'])]);
    expect((await episodeOf('probe_two', 'a1', '2026-06-10T10:00:00Z')).episode_id).toBe(kept.episode_id);
    // An alert on the same account judged late, months before the episode in event time: an
    // episode of its own.
    await commit([hit(third, 'a1', 'p1', '2026-02-01T10:00:00Z', '2026-02-01T10:00:00Z', ['z0'])]);
    expect((await episodeOf('probe_three', 'a1', '2026-02-01T10:00:00Z')).episode_id).not.toBe(kept.episode_id);
  });

  it('takes in the counterparties a later hit names as related members of the episode', async () => {
    const opening = hit(first, 'a2', 'p2', '2026-04-01T10:00:00Z', '2026-04-01T10:00:00Z', ['r1']);
    opening.hit.evidence.counterparties = ['account:payer-1'];
    await commit([opening]);
    const later = hit(first, 'a2', 'p2', '2026-04-01T10:00:00Z', '2026-04-03T10:00:00Z', ['r1', 'r2']);
    later.hit.evidence.counterparties = ['account:payer-1', 'account:payer-2', 'party:owner-2'];
    await commit([later]);
    const { episode_id } = await episodeOf('probe_one', 'a2', '2026-04-02T10:00:00Z');
    const { rows } = await world.api.db.pool.query(
      `SELECT subject_kind || ':' || subject_id AS member, role FROM episode_members WHERE tenant_id = $1 AND episode_id = $2 ORDER BY 1`,
      [world.api.tenantId, episode_id],
    );
    expect(rows).toEqual([
      { member: 'account:a2', role: 'subject' },
      { member: 'account:payer-1', role: 'counterparty' },
      { member: 'account:payer-2', role: 'counterparty' },
      { member: 'party:owner-2', role: 'counterparty' },
      { member: 'party:p2', role: 'subject' },
    ]);
  });

  // A late fact judged at the alert's latest instant makes its headline stronger, at the same
  // severity and inside the episode's span: nothing else of the episode changes.
  it("rewrites the case's amount at stake when a hit inside the span takes the alert's headline", async () => {
    const withTotal = (entry: HitToRecord, total: string) => {
      entry.hit.evidence.amounts = { ...entry.hit.evidence.amounts, total };
      return entry;
    };
    await commit([withTotal(hit(first, 'a1', 'p1', '2026-03-10T10:00:00Z', '2026-03-10T12:00:00Z', ['k1', 'k2'], 'medium', 0.52), '1100000')]);
    const { episode_id } = await episodeOf('probe_one', 'a1', '2026-03-10T11:00:00Z');
    const amount = async () =>
      (await world.api.db.pool.query(`SELECT amount_value FROM case_inbox WHERE tenant_id = $1 AND episode_id = $2`, [world.api.tenantId, episode_id])).rows[0].amount_value;
    expect(await amount()).toBe('1100000');
    await commit([withTotal(hit(first, 'a1', 'p1', '2026-03-10T10:00:00Z', '2026-03-10T12:00:00Z', ['k1', 'k2', 'k3'], 'medium', 0.56), '1400000')]);
    expect(await amount()).toBe('1400000');
  });
});

describe('a filed report', () => {
  it('is never reopened: a new alert on its subject starts a case of its own, and one closed otherwise reopens', async () => {
    await commit([hit(first, 'a1', 'p1', '2026-10-01T10:00:00Z', '2026-10-01T10:00:00Z', ['f1'])]);
    const filed = await episodeOf('probe_one', 'a1', '2026-10-01T10:00:00Z');
    const close = (disposition: string) =>
      world.api.db.pool.query(`UPDATE episodes SET status = 'resolved', case_status = 'closed', disposition = $3 WHERE tenant_id = $1 AND episode_id = $2`, [
        world.api.tenantId,
        filed.episode_id,
        disposition,
      ]);
    await close('suspicious_activity_reported');
    await commit([hit(second, 'a1', 'p1', '2026-10-02T10:00:00Z', '2026-10-02T10:00:00Z', ['f2'])]);
    const continuing = await episodeOf('probe_two', 'a1', '2026-10-02T10:00:00Z');
    expect(continuing.episode_id).not.toBe(filed.episode_id);
    const { rows } = await world.api.db.pool.query(`SELECT status, case_status, disposition FROM episodes WHERE tenant_id = $1 AND episode_id = $2`, [world.api.tenantId, filed.episode_id]);
    expect(rows).toEqual([{ status: 'resolved', case_status: 'closed', disposition: 'suspicious_activity_reported' }]);
    // Closed as a false positive (and the new case resolved too), the same subject's next alert reopens it.
    await world.api.db.pool.query(`UPDATE episodes SET status = 'resolved', case_status = 'closed', disposition = 'false_positive' WHERE tenant_id = $1 AND episode_id = $2`, [
      world.api.tenantId,
      continuing.episode_id,
    ]);
    await close('false_positive');
    await commit([hit(third, 'a1', 'p1', '2026-10-03T10:00:00Z', '2026-10-03T10:00:00Z', ['f3'])]);
    expect([filed.episode_id, continuing.episode_id]).toContain((await episodeOf('probe_three', 'a1', '2026-10-03T10:00:00Z')).episode_id);
  });
});

describe('evidence', () => {
  it('adds nothing for a hit an earlier evidence row holds, though a later one was recorded since, open or closed', async () => {
    const earlier = hit(first, 'a2', 'p2', '2026-07-01T10:00:00Z', '2026-07-01T12:00:00Z', ['w1', 'w2']);
    await commit([earlier]);
    // A late fact judged at its own instant, recorded after: the latest evidence row is its own.
    await commit([hit(first, 'a2', 'p2', '2026-07-01T11:00:00Z', '2026-07-01T11:30:00Z', ['w3'])]);
    const rows = async () => (await world.api.db.pool.query(`SELECT count(*)::int AS n FROM alerts a JOIN alert_evidence e USING (tenant_id, alert_id) WHERE a.subject_id = 'a2' AND a.detector_id = 'probe_one' AND a.window_to >= '2026-07-01' AND a.window_to < '2026-08-01'`)).rows[0].n;
    expect(await rows()).toBe(2);
    // The first hit delivered again: nothing new.
    expect((await commit([earlier])).recorded).toMatchObject({ opened: [], updated: 0 });
    expect(await rows()).toBe(2);
    // Disposed of by an analyst, the same facts open nothing either.
    await world.api.db.pool.query(`UPDATE alerts SET status = 'closed' WHERE tenant_id = $1 AND subject_id = 'a2' AND detector_id = 'probe_one' AND window_to >= '2026-07-01' AND window_to < '2026-08-01'`, [world.api.tenantId]);
    expect((await commit([earlier])).recorded).toMatchObject({ opened: [], updated: 0 });
  });
});
