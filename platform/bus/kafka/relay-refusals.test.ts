import { afterAll, beforeAll, expect, it } from 'vitest';
import { FAMILY_NAMES } from '../../../schemas/families/index.ts';
import { eventStatusSchema, ingestReceiptSchema } from '../../../schemas/responses.ts';
import { partyEvent } from '../../../test/fixtures/events.ts';
import { startTestApi, type TestApi } from '../../../test/support/test-api.ts';
import { describeWithKafka } from './kafka-engines.test-kit.ts';
import { startKafkaHarness } from './testing.ts';

// A row the relay dead-letters leaves its event saying so (GET /v1/events/{id}), never `pending`
// for ever: against Kafka and the registry the test set-up starts (or KAFKA_BROKERS and
// SCHEMA_REGISTRY_URL).
describeWithKafka('relay refusals', ({ brokers, registryUrl }) => {
  const TOPICS = [...FAMILY_NAMES.map((f) => `inbox.${f}`), 'canonical.party'];
  let api: TestApi;
  // A relay of a namespace of its own, which reads the outbox from the start, until it has moved
  // every row; then stopped.
  const relayOnce = async (): Promise<{ deadLettered: number; deadLetterTopic: string }> => {
    const harness = await startKafkaHarness({ brokers, registryUrl, pool: api.db.pool, topics: TOPICS });
    try {
      await harness.settle();
      return { deadLettered: harness.relay.stats.deadLettered, deadLetterTopic: harness.names.relayDeadLetterTopic() };
    } finally {
      await harness.close();
    }
  };
  const accept = async (externalId: string) => {
    const res = await api.client.post('/v1/parties', partyEvent(externalId), api.keys.ingest);
    expect(res.statusCode, res.body).toBe(202);
    return ingestReceiptSchema.parse(res.json()).event_id;
  };
  const statusOf = async (eventId: string) => eventStatusSchema.parse((await api.client.get(`/v1/events/${eventId}`, api.keys.ingest)).json());
  // A lone UTF-16 surrogate in the stored event: the API refuses one now, rows accepted before
  // it did may hold one, and Avro strings (UTF-8) cannot carry it.
  const spoil = (eventId: string) =>
    api.db.pool.query(`UPDATE inbox_events SET raw_event = convert_to(replace(convert_from(raw_event, 'UTF8'), 'Ada Lovelace', $2), 'UTF8') WHERE event_id = $1`, [eventId, 'Ada \\ud800']);

  beforeAll(async () => {
    api = await startTestApi();
  });
  afterAll(async () => {
    await api?.close();
  });

  it('rejects an accepted event the relay dead-letters, with a relay stage entry, once however often it is dead-lettered', async () => {
    const lone = await accept('lone-1');
    const fine = await accept('fine-1');
    await spoil(lone.replace(/^evt_/, ''));
    const first = await relayOnce();
    expect(first.deadLettered).toBe(1);
    const refused = await statusOf(lone);
    expect(refused).toMatchObject({ status: 'rejected', rejection: { code: 'relay_encoding_failed', topic: 'inbox.party' }, attempts: 1 });
    expect(refused.terminal_at).not.toBeNull();
    expect(refused.stage_history.map((s) => [s.stage, s.status])).toEqual([
      ['received', 'ok'],
      ['relay', 'rejected'],
    ]);
    expect(refused.stage_history[1]!.detail).toMatchObject({ code: 'relay_encoding_failed', dead_letter_topic: first.deadLetterTopic });
    // The event relayed is untouched: the canonical pipeline has it now.
    expect(await statusOf(fine)).toMatchObject({ status: 'pending', rejection: null, stage_history: [{ stage: 'received', status: 'ok' }] });
    // Another relay dead-letters the row again.
    expect((await relayOnce()).deadLettered).toBe(1);
    expect(await statusOf(lone)).toEqual(refused);
  });

  it('marks the event of a change record it dead-letters as failed at the relay, its status as it was, once', async () => {
    const eventId = await accept('changed-1');
    const uuid = eventId.replace(/^evt_/, '');
    const change = JSON.stringify({ tenant_id: 'acme', event_id: uuid, external_id: 'changed-\ud800', occurred_at: '2026-09-01T11:59:00Z', received_at: '2026-09-01T12:00:00.000Z', object: 'party', sequence: 1, current: true, data: {} });
    await api.db.pool.query(`INSERT INTO outbox (tenant_id, event_id, topic, partition_key, created_at, payload) VALUES ('acme', $1, 'canonical.party', 'acme/party/changed-1', now(), $2)`, [uuid, change]);
    await relayOnce();
    await relayOnce();
    const status = await statusOf(eventId);
    expect(status.status).toBe('pending');
    expect(status.stage_history.map((s) => [s.stage, s.status])).toEqual([
      ['received', 'ok'],
      ['relay', 'failed'],
    ]);
    expect(status.stage_history[1]!.detail).toMatchObject({ code: 'relay_encoding_failed', topic: 'canonical.party' });
  });
});
