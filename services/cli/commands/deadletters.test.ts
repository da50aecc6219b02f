import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ParkedRecordStore } from '../../../platform/bus/parking/store.ts';
import { partyEvent } from '../../../test/fixtures/events.ts';
import { runSvc } from '../../../test/support/svc-process.ts';
import { startTestApi, type TestApi } from '../../../test/support/test-api.ts';

// A record a group parked, seen from every side: the event's stage history, `svc deadletters`
// (list, replay, discard) and `svc status`, against the test database as an operator's CLI would.
let api: TestApi;
let env: NodeJS.ProcessEnv;
let store: ParkedRecordStore;
let eventId: string;

beforeAll(async () => {
  api = await startTestApi();
  store = new ParkedRecordStore(api.db.pool);
  const { SVC_DATA_DIR: _ignored, ...rest } = process.env;
  env = { ...rest, DATABASE_URL: api.db.url, SVC_MASTER_KEY: randomBytes(32).toString('base64url'), LOG_LEVEL: 'warn' };
  const accepted = await api.client.post('/v1/parties', partyEvent('parked-party'), api.keys.ingest);
  eventId = (accepted.json() as { event_id: string }).event_id;
  const record = (offset: string) => ({
    topic: 'canonical.party',
    partition: 3,
    offset,
    key: `${api.tenantId}/party/parked-party`,
    value: Buffer.from('{"object":"party"}'),
    headers: { tenant_id: api.tenantId, event_id: eventId.slice('evt_'.length) },
  });
  await store.park('graph', record('7:1'), new RangeError('Invalid time value'), 3);
  await store.park('aggregates', record('7:1'), new Error('numeric field overflow'), 3);
});
afterAll(async () => api?.close());

const svc = (...args: string[]) => runSvc(['deadletters', ...args], env);
const events = async () => (await api.client.get(`/v1/events/${eventId}`, api.keys.ingest)).json() as { stage_history: Array<{ stage: string; status: string; detail: Record<string, unknown> | null }> };

describe('svc deadletters', () => {
  it('shows the failed stage and its error on the event', async () => {
    const stages = (await events()).stage_history.filter((s) => s.status === 'failed');
    expect(stages).toEqual([
      { stage: 'graph', status: 'failed', at: expect.any(String), worker: expect.stringMatching(/^graph:/), duration_ms: null, detail: expect.objectContaining({ error: 'RangeError: Invalid time value', attempts: 3 }) },
      { stage: 'aggregates', status: 'failed', at: expect.any(String), worker: expect.stringMatching(/^aggregates:/), duration_ms: null, detail: expect.objectContaining({ error: 'Error: numeric field overflow' }) },
    ]);
  });

  it('lists parked records, by group, as text and JSON', async () => {
    const all = await svc('list', '--json');
    expect(all.code, all.stderr).toBe(0);
    expect(JSON.parse(all.stdout)).toEqual([
      expect.objectContaining({ group: 'graph', tenant_id: api.tenantId, event_id: eventId, topic: 'canonical.party', partition: 3, offset: '7:1', status: 'parked', attempts: 3, error: 'RangeError: Invalid time value' }),
      expect.objectContaining({ group: 'aggregates', status: 'parked' }),
    ]);
    const text = await svc('list', '--group', 'graph');
    expect(text.stdout).toMatch(/^#\d+ graph .* canonical\.party\[3\]@7:1 parked after 3 attempt\(s\), .*: RangeError: Invalid time value\n$/);
  });

  it('refuses a replay or discard without a selection', async () => {
    for (const action of ['replay', 'discard']) {
      const refused = await svc(action);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain('usage: svc deadletters');
    }
    expect((await store.list({ statuses: ['parked'] })).length).toBe(2);
  });

  it('asks for a replay, which the group carries out, and discards', async () => {
    const replay = await svc('replay', '--group', 'graph');
    expect(replay.code, replay.stderr).toBe(0);
    expect(replay.stdout).toMatch(/^asked the group to replay 1 record\(s\): \d+\n$/);
    // What a running member of the group does (ParkingLot.replays): hand it over, here successfully.
    const handled: string[] = [];
    expect(await store.replayNext('graph', async (record) => void handled.push(record.offset))).toBe(true);
    expect(await store.replayNext('graph', async () => undefined)).toBe(false);
    expect(handled).toEqual(['7:1']);
    expect((await events()).stage_history.at(-1)).toMatchObject({ stage: 'graph', status: 'ok', detail: { replayed: true } });

    const discard = await svc('discard', '--group', 'aggregates', '--json');
    expect(JSON.parse(discard.stdout)).toEqual([expect.objectContaining({ group: 'aggregates', status: 'discarded' })]);
    const open = await svc('list');
    expect(open.stdout).toBe('no parked records\n');
    expect(JSON.parse((await svc('list', '--status', 'replayed', '--json')).stdout)).toEqual([expect.objectContaining({ group: 'graph', status: 'replayed' })]);
  });

  it('puts a record that fails its replay back, with the new error', async () => {
    await store.park('detect', { topic: 'canonical.movement', partition: 1, offset: '9:4', key: 'k', value: Buffer.from('{}'), headers: { tenant_id: api.tenantId } }, new Error('first'), 3);
    await store.requestReplay({ group: 'detect' });
    expect(await store.replayNext('detect', async () => Promise.reject(new Error('still failing')))).toBe(true);
    expect(await store.list({ group: 'detect' })).toEqual([expect.objectContaining({ status: 'parked', error: 'Error: still failing', attempts: 4 })]);
    // A transient failure leaves it waiting for its replay.
    await store.requestReplay({ group: 'detect' });
    await expect(store.replayNext('detect', async () => Promise.reject(Object.assign(new Error('gone'), { code: 'ECONNREFUSED' })))).rejects.toThrow('gone');
    expect(await store.list({ group: 'detect' })).toEqual([expect.objectContaining({ status: 'replay_requested', attempts: 4 })]);

    // Still open: counted by svc status and the metrics.
    const status = await runSvc(['status', '--json'], env);
    expect(status.code, status.stderr).toBe(0);
    const groups = (JSON.parse(status.stdout) as { groups: Array<{ group: string; parked: number }> }).groups;
    expect(groups.find((g) => g.group === 'detect')?.parked).toBe(1);
    expect(groups.find((g) => g.group === 'graph')?.parked).toBe(0);
    const metrics = (await api.app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(metrics).toMatch(/svc_parked_records\{group="detect"\} 1\n/);
    expect(metrics).toMatch(/svc_parked_records\{group="graph"\} 0\n/);
  });
});
