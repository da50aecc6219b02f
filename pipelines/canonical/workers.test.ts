import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresLogBus } from '../../platform/bus/postgres-log.ts';
import { movementEvent, partyEvent } from '../../test/fixtures/events.ts';
import { startTestApi, type TestApi } from '../../test/support/test-api.ts';
import { drain } from '../../test/support/test-pipeline.ts';
import { startCanonicalPipeline, type CanonicalPipeline } from './pipeline.ts';

let api: TestApi;
const workers: CanonicalPipeline[] = [];
const errors: unknown[] = [];
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  for (const worker of workers) await worker.stop();
  await api?.close();
});

describe('several canonical workers on one log', () => {
  it('share the partitions and process every event exactly once', async () => {
    const bus = new PostgresLogBus(api.db.pool, { onError: (e) => errors.push(e) });
    for (let i = 0; i < 2; i++) {
      workers.push(await startCanonicalPipeline({ pool: api.db.pool, bus, clock: api.clock, masterKey: api.masterKey, onError: (e) => errors.push(e), worker: `canonical:test-${i}` }));
    }
    // The first worker took every partition; within a heartbeat it hands half to the second.
    const deadline = Date.now() + 10_000;
    while (workers.some((w) => w.consumer.assignment().length !== 8)) {
      if (Date.now() > deadline) throw new Error(`partitions not shared: ${workers.map((w) => w.consumer.assignment().length)}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(workers[0]!.consumer.assignment().filter((p) => workers[1]!.consumer.assignment().includes(p))).toEqual([]);
    const events: unknown[] = [];
    for (let p = 0; p < 40; p++) {
      events.push({ object: 'party', event: partyEvent(`w-p${p}`) });
      for (let m = 0; m < 10; m++) {
        const mv = movementEvent(`w-m${p}-${m}`);
        mv.data.debit = { party_id: `w-p${p}` };
        mv.data.credit = { party_id: `w-p${(p + 1) % 40}` };
        events.push({ object: 'movement', event: mv });
      }
    }
    // Movements may be read before the parties they name: holds and releases race across workers.
    const shuffled = events.reverse();
    for (let i = 0; i < shuffled.length; i += 100) {
      const res = await api.client.post('/v1/batches', { events: shuffled.slice(i, i + 100) }, api.keys.ingest);
      expect(res.statusCode).toBe(202);
    }
    await drain(bus, errors);
    const { rows } = await api.db.pool.query(`SELECT
        (SELECT count(*) FROM inbox_events WHERE status = 'processed')::int AS processed,
        (SELECT count(*) FROM inbox_events)::int AS total,
        (SELECT count(*) FROM event_stages WHERE stage = 'canonical' AND status = 'ok')::int AS ok_stages,
        (SELECT count(*) FROM canonical_movements)::int AS movements,
        (SELECT count(DISTINCT member_id) FROM consumer_members WHERE group_name = 'canonical')::int AS members`);
    expect(rows[0]).toEqual({ processed: 440, total: 440, ok_stages: 440, movements: 400, members: 2 });
    expect(errors).toEqual([]);
    // Both workers took part.
    const workersSeen = await api.db.pool.query(`SELECT DISTINCT worker FROM event_stages WHERE stage = 'canonical' ORDER BY 1`);
    expect(workersSeen.rows.map((r) => r.worker)).toEqual(['canonical:test-0', 'canonical:test-1']);
  });
});
