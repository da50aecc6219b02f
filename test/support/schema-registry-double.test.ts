import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMPATIBILITY, SchemaType } from '@kafkajs/confluent-schema-registry';
import { AvroCodec, COMPATIBILITY_LEVEL, schemaRegistryClient, subjectOf } from '../../platform/bus/kafka/avro-codec.ts';
import { BUS_TOPICS, topicValueSchema } from '../../schemas/bus/avro/index.ts';
import { VALID_EVENTS } from '../fixtures/events.ts';
import { startSchemaRegistryDouble, type SchemaRegistryDouble } from './schema-registry-double.ts';

let double: SchemaRegistryDouble;
beforeAll(async () => {
  double = await startSchemaRegistryDouble();
});
afterAll(async () => double?.close());

// The double's answer, as the registry's API documents it for that path.
const get = async <Body = unknown>(path: string) => {
  const res = await fetch(`${double.url}${path}`);
  return { status: res.status, body: (await res.json()) as Body };
};
const record = (name: string, fields: unknown[]) => ({ type: SchemaType.AVRO as const, schema: JSON.stringify({ type: 'record', name, namespace: 'svc.test', fields }) });

describe('the schema registry double, through @kafkajs/confluent-schema-registry', () => {
  it('registers every bus topic under <topic>-value with its compatibility level, and finds the schemas by id', async () => {
    const codec = new AvroCodec(schemaRegistryClient(double.url), (topic) => `reg1.${topic}`);
    await codec.register(BUS_TOPICS);
    const subjects = (await get<string[]>('/subjects')).body;
    for (const topic of BUS_TOPICS) {
      const subject = subjectOf(`reg1.${topic}`);
      expect(subjects).toContain(subject);
      expect((await get(`/config/${subject}`)).body).toEqual({ compatibilityLevel: COMPATIBILITY_LEVEL });
      const latest = (await get<{ id: number }>(`/subjects/${subject}/versions/latest`)).body;
      expect(latest).toMatchObject({ subject, version: 1, id: codec.schemaId(topic) });
      expect(JSON.parse((await get<{ schema: string }>(`/schemas/ids/${latest.id}`)).body.schema)).toEqual(topicValueSchema(topic).schema);
    }
    // The same schemas again: the same ids, no new versions.
    const again = new AvroCodec(schemaRegistryClient(double.url), (topic) => `reg1.${topic}`);
    await again.register(BUS_TOPICS);
    for (const topic of BUS_TOPICS) expect(again.schemaId(topic)).toBe(codec.schemaId(topic));
    expect((await get(`/subjects/${subjectOf('reg1.inbox.party')}/versions`)).body).toEqual([1]);
    expect(double.requests).toContain(`PUT /config/${subjectOf('reg1.inbox.party')}`);
  });

  it('answers unknown ids and unconfigured subjects as Confluent does', async () => {
    expect(await get('/schemas/ids/99999')).toEqual({ status: 404, body: { error_code: 40403, message: 'Schema not found' } });
    expect((await get('/config/nobody-value')).status).toBe(404);
    expect((await get<{ error_code: number }>('/config/nobody-value')).body.error_code).toBe(40408);
    expect((await get<{ error_code: number }>('/subjects/nobody-value/versions')).body.error_code).toBe(40401);
  });

  it('refuses a schema its subject level forbids: BACKWARD_TRANSITIVE checks every version, BACKWARD the latest', async () => {
    const v1 = record('T', [{ name: 'x', type: 'string' }]);
    const v2 = record('T', []);
    // Reads v2's records (default) but not v1's (a string is no int).
    const v3 = record('T', [{ name: 'x', type: 'int', default: 0 }]);
    for (const [subject, level] of [['transitive-value', COMPATIBILITY.BACKWARD_TRANSITIVE], ['latest-value', COMPATIBILITY.BACKWARD]] as const) {
      const registry = schemaRegistryClient(double.url);
      await registry.register(v1, { subject, compatibility: level });
      await registry.register(v2, { subject, compatibility: level });
      if (level === COMPATIBILITY.BACKWARD) await expect(registry.register(v3, { subject, compatibility: level })).resolves.toMatchObject({ id: expect.any(Number) });
      else await expect(registry.register(v3, { subject, compatibility: level })).rejects.toThrow(/incompatible/);
    }
    // A new required member without a default can never read older records.
    const registry = schemaRegistryClient(double.url);
    await expect(registry.register(record('T', [{ name: 'y', type: 'string' }]), { subject: 'latest-value', compatibility: COMPATIBILITY.BACKWARD })).rejects.toThrow(/incompatible/);
  });

  it('refuses to register under a subject configured with another level', async () => {
    const registry = schemaRegistryClient(double.url);
    await registry.register(record('U', [{ name: 'x', type: 'string' }]), { subject: 'reg2.inbox.party-value', compatibility: COMPATIBILITY.BACKWARD });
    const codec = new AvroCodec(registry, (topic) => `reg2.${topic}`);
    await expect(codec.register(['inbox.party'])).rejects.toThrow(/Compatibility does not match/);
  });
});

describe('the Avro codec', () => {
  it('frames values as Confluent Avro and reads them back', async () => {
    const codec = new AvroCodec(schemaRegistryClient(double.url), (topic) => `reg3.${topic}`);
    const event = VALID_EVENTS.movement();
    const bytes = await codec.encode('inbox.movement', event);
    expect(bytes[0]).toBe(0);
    expect(bytes.readInt32BE(1)).toBe(codec.schemaId('inbox.movement'));
    expect(await codec.decode('inbox.movement', bytes)).toStrictEqual(event);
    // Another process decodes by the id alone.
    const reader = new AvroCodec(schemaRegistryClient(double.url), (topic) => `reg3.${topic}`);
    expect(await reader.decode('inbox.movement', bytes)).toStrictEqual(event);
  });

  it('reads records written with an earlier version of the schema (one member fewer)', async () => {
    const registry = schemaRegistryClient(double.url);
    const current = topicValueSchema('inbox.party').schema as { fields: Array<{ name: string }> };
    const older = { ...current, fields: current.fields.filter((f) => f.name !== 'recorded_at') };
    const { id: olderId } = await registry.register({ type: SchemaType.AVRO, schema: JSON.stringify(older) }, { subject: 'reg4.inbox.party-value', compatibility: COMPATIBILITY_LEVEL });
    const event = VALID_EVENTS.party();
    const avroValue = topicValueSchema('inbox.party').toAvro(event) as Record<string, unknown>;
    delete avroValue.recorded_at;
    const written = await registry.encode(olderId, avroValue);
    const codec = new AvroCodec(schemaRegistryClient(double.url), (topic) => `reg4.${topic}`);
    await codec.register(['inbox.party']);
    expect(codec.schemaId('inbox.party')).not.toBe(olderId);
    expect(await codec.decode('inbox.party', written)).toStrictEqual(event);
  });
});
