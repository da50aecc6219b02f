import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { COMPATIBILITY, SchemaType } from '@kafkajs/confluent-schema-registry';
import type { KafkaMessage } from 'kafkajs';
import { FAMILY_NAMES } from '../../../schemas/families/index.ts';
import { VALID_EVENTS } from '../../../test/fixtures/events.ts';
import { startTestApi, type TestApi } from '../../../test/support/test-api.ts';
import { CONTRACT_TOPICS, describeBusContract, eventually, seqOf, writeRecords } from '../contract.test-kit.ts';
import type { BusRecord, Consumer } from '../port.ts';
import { topicValueSchema } from '../../../schemas/bus/avro/index.ts';
import { AvroCodec, COMPATIBILITY_LEVEL, schemaRegistryClient, subjectOf } from './avro-codec.ts';
import { ParkedRecordStore } from '../parking/store.ts';
import { isTransient } from '../parking/transient.ts';
import { startKafkaHarness, type KafkaHarness } from './testing.ts';

// Against whatever the run provides: Kafka 3.9 (KRaft) and Apicurio's Confluent-compatible
// registry started by the test set-up (platform/local-engines), or the cluster KAFKA_BROKERS and
// the registry SCHEMA_REGISTRY_URL name.
const brokers = inject('kafkaBrokers');
const registryUrl = inject('schemaRegistryUrl');

if (!brokers || !registryUrl) {
  describe('Kafka bus', () => {
    // In CI the engines must be there: a missing one is a failure, never a silent skip.
    it.runIf(Boolean(process.env.CI))('has a Kafka broker and a schema registry to run against', () => {
      throw new Error(`no ${brokers ? 'schema registry' : 'Kafka broker'}: the test set-up could not start it (see its stderr) and ${brokers ? 'SCHEMA_REGISTRY_URL' : 'KAFKA_BROKERS'} is not set`);
    });
    it.skipIf(Boolean(process.env.CI))('runs only with a broker and a registry (started by the test set-up, or KAFKA_BROKERS and SCHEMA_REGISTRY_URL)', () => undefined);
  });
} else {
  const RETRY = { backoffMs: 20, maxBackoffMs: 100 };
  // Idempotent, as the service runs, unless KAFKA_IDEMPOTENT_PRODUCER=false (a broker without it).
  const idempotent = process.env.KAFKA_IDEMPOTENT_PRODUCER !== 'false';

  describeBusContract('Kafka (kafkajs), fed by the relay', async ({ pool, errors }) => {
    const harness = await startKafkaHarness({ brokers, registryUrl, pool, topics: CONTRACT_TOPICS, onError: (e) => errors.push(e), bus: { retry: RETRY }, relay: { idempotent } });
    return { bus: harness.bus, settle: () => harness.settle(), close: () => harness.close() };
  });

  describe('Kafka bus', () => {
    let api: TestApi;
    let harness: KafkaHarness;
    const errors: unknown[] = [];
    const consumers: Consumer[] = [];
    const ALL_TOPICS = [...FAMILY_NAMES.map((f) => `inbox.${f}`), ...CONTRACT_TOPICS];

    beforeAll(async () => {
      api = await startTestApi();
      harness = await startKafkaHarness({ brokers, registryUrl, pool: api.db.pool, topics: ALL_TOPICS, onError: (e) => errors.push(e), bus: { retry: RETRY }, relay: { idempotent } });
    });
    afterAll(async () => {
      for (const consumer of consumers) await consumer.stop().catch(() => undefined);
      await harness?.close();
      await api?.close();
    });

    // Every message of a Kafka topic, read from the start by a throwaway group. Started before
    // what it waits for: joining a group takes the coordinator's 3 s initial rebalance delay.
    async function reader(topic: string): Promise<{ messages: KafkaMessage[]; until: (count: number) => Promise<KafkaMessage[]> }> {
      const consumer = harness.kafka.consumer({ groupId: `${harness.namespace}reader-${Math.random()}`, maxWaitTimeInMs: 100 });
      const messages: KafkaMessage[] = [];
      await consumer.connect();
      await consumer.subscribe({ topics: [topic], fromBeginning: true });
      // run() resolves once joined: left running in the background.
      const running = consumer.run({ eachMessage: async ({ message }) => void messages.push(message) });
      return {
        messages,
        until: async (count) => {
          try {
            await eventually(() => messages.length >= count, `${count} messages on ${topic}`);
          } finally {
            await running.catch(() => undefined);
            await consumer.disconnect();
          }
          return messages;
        },
      };
    }

    it('carries every family accepted by the API to its inbox topic as Avro, and hands it over as the JSON sent', async () => {
      const sent = new Map<string, unknown>();
      for (const family of FAMILY_NAMES) {
        const event = VALID_EVENTS[family](`kafka-${family}`);
        const path = { party: '/v1/parties', account: '/v1/accounts', instrument: '/v1/instruments', movement: '/v1/movements', relationship: '/v1/relationships', control_event: '/v1/control-events' }[family];
        const res = await api.client.post(path, event, api.keys.ingest);
        expect(res.statusCode).toBe(202);
        sent.set(`inbox.${family}`, event);
      }
      const wire = await reader(`${harness.namespace}inbox.party`);
      const got: BusRecord[] = [];
      consumers.push(await harness.bus.consume({ group: 'inbox-reader', topics: ALL_TOPICS.slice(0, 6), handle: async (records) => void got.push(...records) }));
      await harness.settle();
      // On the wire: Confluent framing with the id registered under <topic>-value.
      const raw = await wire.until(1);
      expect(raw[0]!.value![0]).toBe(0);
      expect(raw[0]!.value!.readInt32BE(1)).toBe(harness.codec.schemaId('inbox.party'));
      expect(raw[0]!.key!.toString()).toBe('acme/party/kafka-party');
      const config = await fetch(`${harness.registryUrl}/config/${subjectOf(`${harness.namespace}inbox.party`)}`);
      expect(await config.json()).toEqual({ compatibilityLevel: COMPATIBILITY_LEVEL });
      // Through the bus: the value as sent, the headers of the embedded log.
      await eventually(() => got.length >= 6, 'the six events');
      for (const record of got) {
        expect(JSON.parse(record.value.toString('utf8'))).toStrictEqual(sent.get(record.topic));
        expect(record.headers).toEqual({ tenant_id: 'acme', event_id: expect.stringMatching(/^[0-9a-f-]{36}$/), received_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT[\d:.]+Z$/), historical: 'false' });
      }
    });

    it('parks a value it cannot decode, with its bytes, and hands over the records after it', async () => {
      const group = 'undecodable';
      const topic = harness.names.topic('canonical.party');
      await writeRecords(api.db.pool, [{ topic: 'canonical.party', key: 'acme/party/before-garbage', seq: 1 }]);
      await harness.settle();
      const producer = harness.kafka.producer();
      await producer.connect();
      // Not Confluent's framing (no magic byte, no schema id): no schema can read it.
      await producer.send({ topic, messages: [{ key: 'acme/party/garbage', value: Buffer.from('not avro at all'), headers: { tenant_id: 'acme', event_id: '00000000-0000-4000-8000-000000000001' } }] });
      await producer.disconnect();
      await writeRecords(api.db.pool, [{ topic: 'canonical.party', key: 'acme/party/after-garbage', seq: 1 }]);
      await harness.settle();
      const handled: string[] = [];
      consumers.push(await harness.bus.consume({ group, topics: ['canonical.party'], handle: async (records) => void handled.push(...records.map((r) => r.key)) }));
      await eventually(() => handled.includes('acme/party/after-garbage'), 'the record after the undecodable one');
      expect(handled).toContain('acme/party/before-garbage');
      expect(handled).not.toContain('acme/party/garbage');
      const parked = await new ParkedRecordStore(api.db.pool).list({ group });
      expect(parked).toMatchObject([{ group, tenantId: 'acme', key: 'acme/party/garbage', topic: 'canonical.party', status: 'parked' }]);

      // A handler failing for a passing reason is retried; the undecodable record is parked once.
      const retried = 'undecodable-retried';
      let failures = 2;
      const after: string[] = [];
      consumers.push(
        await harness.bus.consume({
          group: retried,
          topics: ['canonical.party'],
          handle: async (records) => {
            if (failures-- > 0) throw Object.assign(new Error('connection reset'), { code: 'ECONNRESET' });
            after.push(...records.map((r) => r.key));
          },
        }),
      );
      await eventually(() => after.includes('acme/party/after-garbage'), 'the record after the undecodable one, once the handler recovers');
      expect(await new ParkedRecordStore(api.db.pool).list({ group: retried })).toMatchObject([{ key: 'acme/party/garbage', attempts: 1 }]);
    });

    it('decodes a record it parked undecoded when it is replayed, as a delivery would', async () => {
      // Only this test's group reads from here on.
      for (const consumer of consumers.splice(0)) await consumer.stop();
      const group = 'undecodable-replayed';
      const key = 'acme/party/read-later';
      // This process cannot read the record the first time (as a reader without the writer's
      // schema), and can when it is replayed.
      const codec = harness.codec;
      const decode = codec.decode.bind(codec);
      let refused = false;
      codec.decode = async (topic, bytes) => {
        const value = await decode(topic, bytes);
        if (!refused && (value as { external_id?: string }).external_id === 'read-later') {
          refused = true;
          throw new Error('no reader for this writer schema yet');
        }
        return value;
      };
      try {
        const handled: BusRecord[] = [];
        consumers.push(await harness.bus.consume({ group, topics: ['canonical.party'], handle: async (records) => void handled.push(...records) }));
        await writeRecords(api.db.pool, [{ topic: 'canonical.party', key, seq: 4 }]);
        await harness.settle();
        const store = new ParkedRecordStore(api.db.pool);
        // (The group read from the start: the garbage of the test before is parked too.)
        const parkedOf = async () => (await store.list({ group })).find((record) => record.key === key);
        await eventually(async () => (await parkedOf()) !== undefined, 'the record parked');
        const parked = await parkedOf();
        expect(parked).toMatchObject({ key, status: 'parked' });
        expect(handled.some((r) => r.key === key)).toBe(false);
        await store.requestReplay({ group, ids: [parked!.id] });
        await eventually(() => handled.some((r) => r.key === key), 'the replayed record');
        expect(seqOf(handled.find((r) => r.key === key)!)).toEqual({ key, seq: 4 });
        await eventually(async () => (await store.list({ group, ids: [parked!.id] }))[0]?.status === 'replayed', 'the parked record marked replayed');
      } finally {
        codec.decode = decode;
      }
    });

    it('the relay restarted resumes where Kafka acknowledged: nothing lost, every entity in order', async () => {
      const keys = Array.from({ length: 8 }, (_, i) => `acme/account/restart-${i}`);
      await harness.relay.stop();
      for (let seq = 1; seq <= 3; seq++) await writeRecords(api.db.pool, keys.map((key) => ({ topic: 'canonical.account', key, seq })));
      await harness.relay.start();
      await harness.settle();
      await harness.relay.stop();
      for (let seq = 4; seq <= 6; seq++) await writeRecords(api.db.pool, keys.map((key) => ({ topic: 'canonical.account', key, seq })));
      const got: BusRecord[] = [];
      consumers.push(await harness.bus.consume({ group: 'after-restart', topics: ['canonical.account'], handle: async (records) => void got.push(...records) }));
      await harness.relay.start();
      await harness.settle();
      await eventually(() => got.filter((r) => seqOf(r).key.includes('restart-')).length >= keys.length * 6, 'every record');
      for (const key of keys) {
        const seqs = got.map(seqOf).filter((s) => s.key === key).map((s) => s.seq);
        expect(seqs).toEqual([1, 2, 3, 4, 5, 6]);
      }
    });

    it('dead-letters an outbox row its Avro schema cannot carry exactly, and relays the rows after it', async () => {
      const before = harness.relay.stats.deadLettered;
      const payload = (externalId: string, seq: number) =>
        JSON.stringify({ tenant_id: 'acme', event_id: crypto.randomUUID(), external_id: externalId, occurred_at: '2026-09-01T11:59:00Z', received_at: '2026-09-01T12:00:00.000Z', object: 'party', sequence: seq, current: true, data: {} });
      // A lone surrogate, as JSON text: the API accepts it today; Avro strings are UTF-8.
      await api.db.pool.query(
        `INSERT INTO outbox (tenant_id, event_id, topic, partition_key, created_at, payload)
         VALUES ('acme', gen_random_uuid(), 'canonical.party', 'acme/party/lone', now(), $1), ('acme', gen_random_uuid(), 'canonical.party', 'acme/party/lone', now(), $2)`,
        [payload('LONE', 1).replace('"LONE"', '"lone\\ud800"'), payload('lone', 2)],
      );
      const deadLetters = await reader(harness.relay.names.relayDeadLetterTopic());
      const got: BusRecord[] = [];
      consumers.push(await harness.bus.consume({ group: 'after-dead-letter', topics: ['canonical.party'], handle: async (records) => void got.push(...records) }));
      await harness.settle();
      expect(harness.relay.stats.deadLettered).toBe(before + 1);
      const dead = await deadLetters.until(1);
      expect(dead[0]!.value!.toString()).toContain('lone\\ud800');
      await eventually(() => got.some((r) => r.key === 'acme/party/lone'), 'the row after it');
      expect(got.filter((r) => r.key === 'acme/party/lone').map((r) => JSON.parse(r.value.toString()).sequence)).toEqual([2]);
    });
  });

  // The registry itself, through the client the codec uses: its compatibility rules are the
  // registry's, not ours, so they are proven against the real one (the double only imitates them).
  describe('Schema registry (Confluent API)', () => {
    const namespace = `reg${Math.random().toString(36).slice(2, 8)}.`;
    const record = (fields: unknown[]) => ({ type: SchemaType.AVRO as const, schema: JSON.stringify({ type: 'record', name: 'T', namespace: 'svc.test', fields }) });

    it('keeps BACKWARD_TRANSITIVE on every subject the codec registers', async () => {
      const codec = new AvroCodec(schemaRegistryClient(registryUrl), (topic) => `${namespace}${topic}`);
      await codec.register(['inbox.party', 'canonical.account']);
      for (const topic of ['inbox.party', 'canonical.account']) {
        const config = await fetch(`${registryUrl}/config/${subjectOf(`${namespace}${topic}`)}`);
        expect(await config.json()).toEqual({ compatibilityLevel: COMPATIBILITY_LEVEL });
      }
      // Registering the same schemas again finds them: the same ids, no second version.
      const again = new AvroCodec(schemaRegistryClient(registryUrl), (topic) => `${namespace}${topic}`);
      await again.register(['inbox.party']);
      expect(again.schemaId('inbox.party')).toBe(codec.schemaId('inbox.party'));
      expect(await (await fetch(`${registryUrl}/subjects/${subjectOf(`${namespace}inbox.party`)}/versions`)).json()).toEqual([1]);
    });

    it('refuses a change that cannot read every earlier version (BACKWARD_TRANSITIVE), where BACKWARD checks the latest only', async () => {
      const v1 = record([{ name: 'x', type: 'string' }]);
      const v2 = record([]);
      // Reads v2's records (x takes its default) but not v1's (a string is no int).
      const v3 = record([{ name: 'x', type: 'int', default: 0 }]);
      const registry = schemaRegistryClient(registryUrl);
      for (const level of [COMPATIBILITY.BACKWARD_TRANSITIVE, COMPATIBILITY.BACKWARD]) {
        const subject = `${namespace}${level.toLowerCase()}-value`;
        await registry.register(v1, { subject, compatibility: level });
        await registry.register(v2, { subject, compatibility: level });
        const third = registry.register(v3, { subject, compatibility: level });
        if (level === COMPATIBILITY.BACKWARD) await expect(third).resolves.toMatchObject({ id: expect.any(Number) });
        else await expect(third).rejects.toThrow(/incompatible/i);
      }
    });

    it("decodes a value by its writer's schema id: one written with an earlier version reads with today's schema", async () => {
      const topic = 'canonical.party';
      const subject = subjectOf(`${namespace}${topic}`);
      // The schema of today without its optional `sequence`: an earlier version of the subject.
      const current = topicValueSchema(topic).schema as { fields: { name: string }[] };
      const earlier = { ...current, fields: current.fields.filter((field) => field.name !== 'sequence') };
      const registry = schemaRegistryClient(registryUrl);
      const { id: earlierId } = await registry.register({ type: SchemaType.AVRO, schema: JSON.stringify(earlier) }, { subject, compatibility: COMPATIBILITY_LEVEL });
      const written = await registry.encode(earlierId, {
        tenant_id: 'acme', event_id: '00000000-0000-4000-8000-000000000002', external_id: 'earlier-writer', occurred_at: '2026-09-01T11:59:00Z',
        received_at: '2026-09-01T12:00:00.000Z', object: 'party', current: true, data: '{}',
      });
      expect(written.readInt32BE(1)).toBe(earlierId);
      // A codec that has seen nothing: today's schema registers as the next version, and the
      // earlier record is read through the writer schema the registry returns for its id.
      const codec = new AvroCodec(schemaRegistryClient(registryUrl), (t) => `${namespace}${t}`);
      await codec.register([topic]);
      expect(codec.schemaId(topic)).not.toBe(earlierId);
      const decoded = (await codec.decode(topic, written)) as Record<string, unknown>;
      expect(decoded).toMatchObject({ external_id: 'earlier-writer', object: 'party', current: true, data: {} });
      expect(decoded.sequence ?? null).toBeNull();
      // And today's own record, by today's id.
      const today = await codec.encode(topic, { ...decoded, external_id: 'today', sequence: 7 });
      expect(today.readInt32BE(1)).toBe(codec.schemaId(topic));
      expect(await codec.decode(topic, today)).toMatchObject({ external_id: 'today', sequence: 7 });
    });

    it('waits for its upgrade rather than drop a field a newer writer wrote: the record is refused as a passing failure', async () => {
      const topic = 'canonical.account';
      const subject = subjectOf(`${namespace}${topic}`);
      const codec = new AvroCodec(schemaRegistryClient(registryUrl), (t) => `${namespace}${t}`);
      await codec.register([topic]);
      // The next version of the schema, as a writer upgraded first registers it: one optional member more.
      const current = topicValueSchema(topic).schema as { fields: unknown[] };
      const newer = { ...current, fields: [...current.fields, { name: 'ledger_ref', type: ['null', 'string'], default: null }] };
      const registry = schemaRegistryClient(registryUrl);
      const { id: newerId } = await registry.register({ type: SchemaType.AVRO, schema: JSON.stringify(newer) }, { subject, compatibility: COMPATIBILITY_LEVEL });
      const written = await registry.encode(newerId, {
        tenant_id: 'acme', event_id: '00000000-0000-4000-8000-000000000003', external_id: 'newer-writer', occurred_at: '2026-09-01T11:59:00Z',
        received_at: '2026-09-01T12:00:00.000Z', object: 'account', current: true, data: '{}', ledger_ref: 'L-1',
      });
      const refusal = await codec.decode(topic, written).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect((refusal as Error).message).toMatch(/fields ledger_ref this reader does not have/);
      expect(isTransient(refusal)).toBe(true);
    });
  });
}
