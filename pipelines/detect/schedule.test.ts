import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startDetectionWorld, type DetectionWorld } from '../../test/support/detection-world.ts';
import { defineDetector, noHit, nonResult } from '../../services/detection/framework/detector.ts';
import type { DetectPipeline } from './pipeline.ts';
import { dueForSchedule } from './schedule.ts';

// Judges nothing, but only on party data at most 30 days old: time passing alone turns it stale.
const freshParty = defineDetector({
  id: 'fresh_party',
  typology: 'needs fresh party data',
  version: 1,
  subjects: ['party'],
  triggers: ['movement', 'schedule'],
  needs: [{ family: 'party', maxAgeDays: 30 }, { family: 'movement' }],
  windows: ['24h'],
  params: z.strictObject({}),
  evaluate: async () => noHit(),
});

// Throws on one subject's scheduled evaluation, as a detector might on data it did not expect;
// for the others its data is as stale as fresh_party's (so the postures above read alike).
const failsOnSchedule = defineDetector({
  id: 'fails_on_schedule',
  typology: 'throws for one subject',
  version: 1,
  subjects: ['party'],
  triggers: ['schedule'],
  needs: [{ family: 'movement' }],
  windows: ['24h'],
  params: z.strictObject({}),
  evaluate: async (ctx) => {
    if (ctx.subject.id === 's-broken') throw new Error('cannot judge s-broken');
    return nonResult('stale', 'judged on schedule only as stale');
  },
});

let world: DetectionWorld;
const errors: unknown[] = [];
let detect: DetectPipeline;
const evaluation = async (party: string) =>
  (
    await world.api.db.pool.query(
      `SELECT event_at, fact_at, outcomes FROM subject_evaluations WHERE tenant_id = 'acme' AND subject_kind = 'party' AND subject_id = $1 AND mode = 'live'`,
      [party],
    )
  ).rows[0];
const band = async (party: string) =>
  (await world.api.db.pool.query(`SELECT band FROM party_postures WHERE tenant_id = 'acme' AND party_id = $1`, [party])).rows[0]?.band;

beforeAll(async () => {
  world = await startDetectionWorld();
  detect = await world.startDetection({ library: [freshParty, failsOnSchedule], onError: (error) => errors.push(error) });
  // The watched party's data dates from 1 January.
  for (const [id, at] of [['s-watched', '2026-01-01T00:00:00Z'], ['s-dormant', '2025-09-01T00:00:00Z'], ['s-other', '2025-09-01T00:00:00Z']] as const) {
    await world.party(id, {}, at);
    await world.account(`${id}-a`, id, {}, at);
  }
  await world.movements([
    { id: 's-m0', from: ['s-dormant-a', 's-dormant'], to: ['s-other-a', 's-other'], value: 1_000, at: '2025-09-10T00:00:00Z' },
    { id: 's-m1', from: ['s-watched-a', 's-watched'], to: ['s-other-a', 's-other'], value: 1_000, at: '2026-01-20T00:00:00Z' },
  ]);
  await world.settle();
}, 60_000);
afterAll(async () => world?.close());

describe('scheduled evaluation', () => {
  it('evaluates a subject again once event time has moved on, and stops when its facts leave every window', async () => {
    expect(await evaluation('s-watched')).toMatchObject({ outcomes: { fresh_party: 'no_hit' }, fact_at: new Date('2026-01-20T00:00:00Z') });
    expect(await band('s-watched')).toBe('low');
    // Event time moves on with another customer's movement, 26 days later.
    await world.movement({ id: 's-m2', from: ['s-other-a', 's-other'], to: ['s-other-a', 's-other'], value: 1_000, at: '2026-02-15T00:00:00Z' });
    await world.settle();
    const dormantBefore = await evaluation('s-dormant');

    await detect.sweep();
    // Judged again at the watermark: the party data (1 January) is now 45 days old.
    expect(await evaluation('s-watched')).toMatchObject({
      event_at: new Date('2026-02-15T00:00:00Z'),
      fact_at: new Date('2026-01-20T00:00:00Z'),
      outcomes: { fresh_party: 'stale' },
    });
    expect(await band('s-watched')).toBe('incomplete');
    // Its last fact (10 September) is beyond the 90-day windows: nothing left to judge again.
    expect(await evaluation('s-dormant')).toEqual(dormantBefore);

    // Not due again until event time moves another day.
    const evaluatedAt = (await world.api.db.pool.query(`SELECT evaluated_at FROM subject_evaluations WHERE subject_id = 's-watched'`)).rows[0].evaluated_at;
    world.api.clock.advance(60);
    await detect.sweep();
    expect((await world.api.db.pool.query(`SELECT evaluated_at FROM subject_evaluations WHERE subject_id = 's-watched'`)).rows[0].evaluated_at).toEqual(evaluatedAt);
  });

  it('leaves rows of a kind whose outcomes are no longer kept (an account\'s) off the schedule', async () => {
    const { rows } = await world.api.db.pool.query(`SELECT max(event_at) AS watermark FROM subject_evaluations WHERE tenant_id = 'acme' AND mode = 'live'`);
    const twoDaysBefore = new Date(rows[0].watermark.getTime() - 2 * 86_400_000);
    const before = new Date('2026-01-01T00:00:00Z');
    await world.api.db.pool.query(
      `INSERT INTO subject_evaluations (tenant_id, subject_kind, subject_id, mode, ruleset_version, event_at, fact_at, evaluated_at, outcomes)
       VALUES ('acme', 'account', 's-legacy-a', 'live', 1, $1, $1, $2, '{}')`,
      [twoDaysBefore, before],
    );
    const due = async (kinds: Array<'party' | 'account'>) => (await dueForSchedule(world.api.db.pool, 100, new Set(kinds))).map((w) => `${w.subject.kind}:${w.subject.id}`);
    // Due by its instants, but never walked: its outcomes would not be kept, so it would stay due.
    expect(await due(['party', 'account'])).toContain('account:s-legacy-a');
    expect(await due(['party'])).not.toContain('account:s-legacy-a');
    await detect.sweep();
    const legacy = await world.api.db.pool.query(`SELECT event_at, evaluated_at FROM subject_evaluations WHERE subject_kind = 'account' AND subject_id = 's-legacy-a'`);
    expect(legacy.rows).toEqual([{ event_at: twoDaysBefore, evaluated_at: before }]);
  });

  it('judges the others when one subject cannot be judged on schedule, and reports it', async () => {
    await world.party('s-broken', {}, '2026-02-01T00:00:00Z');
    await world.account('s-broken-a', 's-broken', {}, '2026-02-01T00:00:00Z');
    await world.movement({ id: 's-m3', from: ['s-broken-a', 's-broken'], to: ['s-other-a', 's-other'], value: 1_000, at: '2026-02-16T00:00:00Z' });
    await world.settle();
    await world.movement({ id: 's-m4', from: ['s-other-a', 's-other'], to: ['s-other-a', 's-other'], value: 1_000, at: '2026-02-25T00:00:00Z' });
    await world.settle();
    errors.length = 0;

    await detect.sweep();
    expect((await evaluation('s-watched')).event_at).toEqual(new Date('2026-02-25T00:00:00Z'));
    expect((await evaluation('s-broken')).event_at).toEqual(new Date('2026-02-16T00:00:00Z'));
    expect(errors.map((e) => (e as Error).message)).toEqual([expect.stringMatching(/^1 of \d+ subjects of tenant acme due for scheduled evaluation could not be evaluated$/)]);
    expect(((errors[0] as Error).cause as Error).message).toBe('cannot judge s-broken');
  });
});
