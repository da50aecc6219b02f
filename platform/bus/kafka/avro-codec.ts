// Record values on Kafka: Avro, in Confluent's wire format (magic byte 0, the schema id as a
// 4-byte big-endian integer, the Avro binary), with schemas derived from the zod schemas
// (schemas/bus/avro) and registered through @kafkajs/confluent-schema-registry.
//
// Subjects follow Confluent's TopicNameStrategy: `<kafka topic>-value` (the Kafka topic is the bus
// topic behind the bus's namespace prefix, if any). Keys are not Avro: they are the bus key as a
// UTF-8 string (the outbox's partition key), so they have no subject.
//
// Compatibility: BACKWARD_TRANSITIVE, set on each subject when it is first registered. A new
// schema must read everything written with ANY earlier version, not only the latest, because a
// Kafka topic is replayed (a new or reset group reads from the start of retention, retry and
// dead-letter topics hold records for days). Readers decode with the schema of their own code as
// the reader schema, resolving the writer's (looked up by id), so consumers are upgraded before
// (or with) the relay that writes. The API's contract evolves by adding optional members, which
// derive to ["null", T] fields with a default: always backward (and forward) compatible. A reader
// older than the writer would drop the members it does not know: it waits instead (resolverFor).
// Registration fails loudly when a subject was configured with another level.

import { COMPATIBILITY, SchemaRegistry, SchemaType } from '@kafkajs/confluent-schema-registry';
import type avro from 'avsc';
import { avscOptions } from '../../../schemas/bus/avro/derive.ts';
import { topicValueSchema, type DerivedAvro } from '../../../schemas/bus/avro/index.ts';
import { fieldsReaderWouldDrop } from './writer-fields.ts';

export const COMPATIBILITY_LEVEL = COMPATIBILITY.BACKWARD_TRANSITIVE;
const MAGIC_BYTE = 0;
const HEADER_BYTES = 5;

// Whether a value is in Confluent's wire format (a JSON text never starts with a zero byte).
export function isConfluentFramed(bytes: Buffer): boolean {
  return bytes.length >= HEADER_BYTES && bytes[0] === MAGIC_BYTE;
}

export function subjectOf(kafkaTopic: string): string {
  return `${kafkaTopic}-value`;
}

export function schemaRegistryClient(url: string, clientId = 'svc'): SchemaRegistry {
  return new SchemaRegistry({ host: url, clientId }, { [SchemaType.AVRO]: avscOptions() });
}

export class AvroCodec {
  private readonly ids = new Map<string, number>();
  private readonly resolvers = new Map<string, avro.Resolver | null>();

  constructor(
    readonly registry: SchemaRegistry,
    // The Kafka topic of a bus topic (the namespace prefix).
    private readonly kafkaTopicOf: (topic: string) => string = (topic) => topic,
  ) {}

  // Registers (or finds) the current schema of each bus topic under its subject.
  async register(topics: string[]): Promise<void> {
    for (const topic of topics) {
      if (this.ids.has(topic)) continue;
      const derived = topicValueSchema(topic);
      const { id } = await this.registry.register(
        { type: SchemaType.AVRO, schema: JSON.stringify(derived.schema) },
        { subject: subjectOf(this.kafkaTopicOf(topic)), compatibility: COMPATIBILITY_LEVEL },
      );
      this.ids.set(topic, id);
    }
  }

  schemaId(topic: string): number | undefined {
    return this.ids.get(topic);
  }

  // A record value (the JSON value the bus carries) as Confluent-framed Avro. Throws
  // AvroMappingError for a value the schema cannot carry exactly.
  async encode(topic: string, value: unknown): Promise<Buffer> {
    let id = this.ids.get(topic);
    if (id === undefined) {
      await this.register([topic]);
      id = this.ids.get(topic)!;
    }
    const avroValue = topicValueSchema(topic).toAvro(value);
    return this.registry.encode(id, avroValue);
  }

  // Confluent-framed Avro back to the JSON value, read with this code's schema of the topic.
  async decode(topic: string, bytes: Buffer): Promise<unknown> {
    if (!isConfluentFramed(bytes)) throw new Error(`${topic}: not Confluent-framed Avro`);
    const writerId = bytes.readInt32BE(1);
    const reader = topicValueSchema(topic);
    const resolver = await this.resolverFor(topic, writerId, reader);
    const payload = bytes.subarray(HEADER_BYTES);
    return reader.fromAvro(resolver ? reader.type.fromBuffer(payload, resolver) : reader.type.fromBuffer(payload));
  }

  // null when the writer's schema is the reader's own.
  private async resolverFor(topic: string, writerId: number, reader: DerivedAvro): Promise<avro.Resolver | null> {
    const key = `${topic}/${writerId}`;
    const cached = this.resolvers.get(key);
    if (cached !== undefined) return cached;
    const writer = (await this.registry.getSchema(writerId)) as unknown as avro.Type;
    if (writer.equals(reader.type)) {
      this.resolvers.set(key, null);
      return null;
    }
    // A record whose writer knew fields this code does not would lose them: refused as a passing
    // condition (retried, never parked), until this process is upgraded (writer-fields.ts).
    const dropped = fieldsReaderWouldDrop(writer, reader.type);
    if (dropped.length > 0) {
      throw Object.assign(new Error(`${topic}: written with schema ${writerId}, whose fields ${dropped.join(', ')} this reader does not have: waiting for an upgrade`), { retriable: true });
    }
    const resolver = reader.type.createResolver(writer);
    this.resolvers.set(key, resolver);
    return resolver;
  }
}
