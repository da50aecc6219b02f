import { afterAll, beforeAll, expect, it } from 'vitest';
import { startDetectionWorld, type DetectionWorld } from '../../test/support/detection-world.ts';
import { splitTransfers } from '../../services/detection/typologies/behaviour/split_transfers.ts';

// A consumer catching up (or a backfill) reads batches spanning days of event time. A short-window
// pattern early in such a batch must be judged at its own time, not only from the batch's latest
// touch of the subject, where its window no longer reaches back to it.
let world: DetectionWorld;

beforeAll(async () => {
  world = await startDetectionWorld();
  for (const id of ['payer', 'payee', 'other']) {
    await world.party(`P-${id}`, {}, '2025-06-01T00:00:00Z');
    await world.account(`A-${id}`, `P-${id}`, {}, '2025-06-01T00:00:00Z');
  }
  // Three small transfers to one payee within twenty minutes in February, then one payment to
  // someone else in April; all waiting for detection before it starts, so it reads them at once.
  await world.movements([
    ...['07:02:00', '07:10:00', '07:22:00'].map((time, i) => ({ id: `burst${i}`, from: ['A-payer', 'P-payer'] as [string, string], to: ['A-payee', 'P-payee'] as [string, string], value: 380 + i, at: `2026-02-17T${time}Z` })),
    { id: 'april', from: ['A-payer', 'P-payer'], to: ['A-other', 'P-other'], value: 57_350, at: '2026-04-12T01:14:25Z' },
  ]);
  await world.settle();
  await world.startDetection({ library: [splitTransfers] });
  await world.settle();
});
afterAll(async () => world?.close());

it('alerts on a burst early in a batch that also holds the payer\'s much later movement', async () => {
  const { rows } = await world.api.db.pool.query(
    `SELECT subject_id, window_from, window_to FROM alerts WHERE tenant_id = 'acme' AND detector_id = 'split_transfers' ORDER BY subject_id`,
  );
  expect(rows.map((r) => r.subject_id)).toEqual(['A-payee', 'A-payer']);
  for (const row of rows) expect(row.window_to.toISOString()).toBe('2026-02-17T07:22:00.000Z');
  // The paying party's latest evaluation is the April one.
  const { rows: latest } = await world.api.db.pool.query(`SELECT event_at FROM subject_evaluations WHERE tenant_id = 'acme' AND subject_kind = 'party' AND subject_id = 'P-payer' AND mode = 'live'`);
  expect(latest[0].event_at.toISOString()).toBe('2026-04-12T01:14:25.000Z');
});
