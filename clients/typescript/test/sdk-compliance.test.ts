// The SDK's compliance calls (alerts, episodes, case actions) and posture against the real
// service over 127.0.0.1. The alerts are not seeded: the customer's screening reports sanctions
// hits about two parties, and the detection pipeline (with the library's sanctions_hit_reported
// detector) finds them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sanctionsHitReported } from '../../../services/detection/typologies/controls/sanctions_hit_reported.ts';
import { startDetectionWorld, type DetectionWorld } from '../../../test/support/detection-world.ts';
import { apiError, serveForSdk, type SdkService } from '../../../test/support/sdk-service.ts';
import { type Alert, type AlertPage, type Episode, type SvcClient, type WithResponse } from '../src/index.ts';

let world: DetectionWorld;
let svc: SdkService;
let compliance: SvcClient;

beforeAll(async () => {
  world = await startDetectionWorld();
  await world.startDetection({ library: [sanctionsHitReported] });
  for (const id of ['sam', 'sue']) {
    await world.party(id);
    await world.account(`${id}-acct`, id);
  }
  await world.settle();
  // sam's hit is a confirmed match (critical); sue's is reported, not confirmed (high).
  await world.controlEvent('ce-sam', 'sanctions.hit_reported', { kind: 'party', external_id: 'sam' }, '2026-08-30T10:00:00Z', { outcome: 'Confirmed Match' });
  await world.controlEvent('ce-sue', 'sanctions.hit_reported', { kind: 'party', external_id: 'sue' }, '2026-08-30T11:00:00Z');
  await world.settle();
  svc = await serveForSdk(world.api);
  compliance = svc.client('compliance');
});
// The world owns the API: closing it closes the server too.
afterAll(async () => world?.close());

const partyAlert = async (party: string): Promise<Alert> => {
  const [alert] = await compliance.alerts.list({ subject: party, subject_kind: 'party' }).toArray();
  expect(alert, `no alert on ${party}`).toBeDefined();
  return alert!;
};

describe('alerts', () => {
  it('list iterates the alerts detection opened, across pages of one', async () => {
    const pages: Array<WithResponse<AlertPage>> = [];
    for await (const page of compliance.alerts.list({ limit: 1 }).pages()) pages.push(page);
    expect(pages.length).toBeGreaterThanOrEqual(2);
    expect(pages.every((p) => p.data.length === 1 && p.lastResponse.status === 200)).toBe(true);
    expect(pages.at(-1)!.has_more).toBe(false);
    const all: Alert[] = [];
    for await (const alert of compliance.alerts.list({ limit: 1 })) all.push(alert);
    expect(all.map((a) => a.alert_id)).toEqual(pages.flatMap((p) => p.data.map((a) => a.alert_id)));
    expect(new Set(all.map((a) => a.alert_id)).size).toBe(all.length);
    expect(all.every((a) => a.detector === 'sanctions_hit_reported' && a.status === 'open')).toBe(true);
    // Newest first.
    const created = all.map((a) => Date.parse(a.created_at));
    expect(created).toEqual([...created].sort((a, b) => b - a));
    // Both parties were found.
    expect(all.filter((a) => a.subject.kind === 'party').map((a) => a.subject.external_id).sort()).toEqual(['sam', 'sue']);
  });

  it('list applies the filters', async () => {
    const sam = await partyAlert('sam');
    expect(sam).toMatchObject({ subject: { kind: 'party', external_id: 'sam' }, party_id: 'sam', severity: 'critical', detector: 'sanctions_hit_reported' });
    expect(sam.alert_id).toMatch(/^alrt_/);
    expect(sam.episode_id).toMatch(/^epsd_/);
    expect(await compliance.alerts.list({ status: 'closed' }).toArray()).toEqual([]);
    expect(await compliance.alerts.list({ detector: 'fan_in' }).toArray()).toEqual([]);
    const first = await compliance.alerts.list({ detector: 'sanctions_hit_reported', limit: 1 }).firstPage();
    expect(first.data).toHaveLength(1);
    expect(first.has_more).toBe(true);
  });

  it('retrieve answers the alert with its evidence history', async () => {
    const listed = await partyAlert('sam');
    const alert = await compliance.alerts.retrieve(listed.alert_id);
    expect(alert.lastResponse.status).toBe(200);
    expect(alert).toMatchObject({ alert_id: listed.alert_id, summary: expect.stringContaining('ce-sam'), severity: 'critical' });
    expect(alert.evidence_history.length).toBeGreaterThanOrEqual(1);
    expect(alert.evidence_history[0]).toMatchObject({ seq: 1, severity: 'critical' });
    expect(alert.evidence).toEqual(alert.evidence_history.at(-1)!.evidence);
  });

  it('throws 404 for an unknown alert and 403 for a read key', async () => {
    expect(await apiError(compliance.alerts.retrieve('alrt_00000000-0000-7000-8000-000000000000'))).toMatchObject({ status: 404, code: 'svc:resource/not_found' });
    expect(await apiError(svc.client('read').alerts.list().firstPage())).toMatchObject({ status: 403, code: 'svc:auth/insufficient_scope' });
    const bad = await apiError(compliance.alerts.list({ limit: 0 }).toArray());
    expect(bad).toMatchObject({ status: 400, code: 'svc:request/invalid_parameter' });
    expect(bad.errors[0]!.path).toBe('limit');
  });
});

describe('episodes', () => {
  // The two parties are not linked: one episode each.
  const episodeOf = async (party: string): Promise<Episode> => {
    const [episode, ...more] = await compliance.episodes.list({ subject: party, subject_kind: 'party' }).toArray();
    expect(more).toEqual([]);
    return episode!;
  };

  it('list iterates every episode across pages of one', async () => {
    const all: Episode[] = [];
    for await (const episode of compliance.episodes.list({ limit: 1 })) all.push(episode);
    expect(all.length).toBeGreaterThanOrEqual(2);
    expect(new Set(all.map((e) => e.episode_id)).size).toBe(all.length);
    const first = await compliance.episodes.list({ limit: 1 }).firstPage();
    expect(first).toMatchObject({ has_more: true, data: [{ episode_id: all[0]!.episode_id }] });
    expect(first.lastResponse.status).toBe(200);
    const sam = await episodeOf('sam');
    // A critical first alert opens its episode escalated (decision 0009).
    expect(sam).toMatchObject({ status: 'escalated', case_status: 'open', disposition: null });
    expect(sam.members).toContainEqual({ kind: 'party', external_id: 'sam' });
    expect(sam.episode_id).toBe((await partyAlert('sam')).episode_id);
  });

  it('retrieve answers the episode with its alerts and case history', async () => {
    const listed = await episodeOf('sue');
    const episode = await compliance.episodes.retrieve(listed.episode_id);
    expect(episode.lastResponse.status).toBe(200);
    expect(episode).toMatchObject({ episode_id: listed.episode_id, case_status: 'open', case_history: [] });
    expect(episode.alerts.map((a) => a.alert_id)).toContain((await partyAlert('sue')).alert_id);
  });

  it('updateCase applies case actions and answers the episode', async () => {
    const { episode_id } = await episodeOf('sam');
    svc.api.clock.set('2026-09-01T12:30:00Z');
    const investigating = await compliance.episodes.updateCase(episode_id, { status: 'investigating', note: 'called the customer' });
    expect(investigating.lastResponse.status).toBe(200);
    expect(investigating).toMatchObject({ episode_id, case_status: 'investigating', updated_at: '2026-09-01T12:30:00.000Z' });
    expect(investigating.case_history).toEqual([
      { seq: 1, at: '2026-09-01T12:30:00.000Z', actor: svc.api.keys.compliance.keyId, case_status: 'investigating', disposition: null, note: 'called the customer' },
    ]);
    svc.api.clock.set('2026-09-01T13:00:00Z');
    const closed = await compliance.episodes.updateCase(episode_id, { disposition: 'suspicious_activity_reported' });
    expect(closed).toMatchObject({ status: 'resolved', case_status: 'closed', disposition: 'suspicious_activity_reported' });
    expect(closed.case_history.map((c) => c.seq)).toEqual([1, 2]);
    expect((await compliance.episodes.retrieve(episode_id)).case_status).toBe('closed');
    expect(await compliance.episodes.list({ status: 'resolved' }).toArray()).toEqual([expect.objectContaining({ episode_id })]);
  });

  it('throws 400 with field paths for a bad case action, 404 for an unknown episode, 403 for a read key', async () => {
    const { episode_id } = await episodeOf('sue');
    const bad = await apiError(compliance.episodes.updateCase(episode_id, { status: 'investigating', disposition: 'false_positive' }));
    expect(bad).toMatchObject({ status: 400, code: 'svc:validation/schema' });
    expect(bad.errors.map((e) => e.path)).toEqual(['status']);
    expect(await apiError(compliance.episodes.retrieve('epsd_00000000-0000-7000-8000-000000000000'))).toMatchObject({ status: 404, code: 'svc:resource/not_found' });
    expect(await apiError(compliance.episodes.updateCase('epsd_00000000-0000-7000-8000-000000000000', { status: 'escalated' }))).toMatchObject({ status: 404 });
    expect(await apiError(svc.client('read').episodes.updateCase(episode_id, { status: 'escalated' }))).toMatchObject({ status: 403, code: 'svc:auth/insufficient_scope' });
    expect((await compliance.episodes.retrieve(episode_id)).case_status).toBe('open');
  });
});

describe('posture', () => {
  // sue's case is still open (sam's was closed above, which lowers his band).
  it('retrieve answers the band detection computed from the open alert (a read key; no reasons)', async () => {
    const posture = await svc.client('read').posture.retrieve('sue');
    expect(posture.lastResponse.status).toBe(200);
    expect(posture).toMatchObject({ external_id: 'sue', band: (await partyAlert('sue')).severity, coverage: 'complete' });
    expect(posture.band).toBe('high');
    expect(Object.keys(posture).sort()).toEqual(['band', 'computed_at', 'coverage', 'external_id', 'staleness_seconds']);
  });
});
