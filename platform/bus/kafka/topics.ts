// Kafka names of the bus: topics and groups behind an optional namespace prefix (one cluster may
// carry several deployments, or test runs), and the relay's dead-letter topic. Records a group
// cannot process are parked in PostgreSQL (../parking), not on topics.
//
//   <ns><bus topic>        inbox.<family>, canonical.<family>   Avro values, keyed by entity
//   <ns>dlq.relay          outbox rows the relay could not encode (the raw JSON as value)
//
// Group ids are <ns><group>. Topics are created with admin CreateTopics when the cluster allows it
// (DEFAULT_PARTITIONS partitions); otherwise, as on librdkafka's mock cluster, they are created by
// the broker the first time a client asks for them (auto-creation, the broker's partition count).

import type { Kafka } from 'kafkajs';

// As many as the embedded log's partitions: the same parallelism per group.
export const DEFAULT_PARTITIONS = 16;

export class KafkaNames {
  constructor(readonly namespace = '') {}

  topic(busTopic: string): string {
    return `${this.namespace}${busTopic}`;
  }

  busTopic(kafkaTopic: string): string {
    return kafkaTopic.startsWith(this.namespace) ? kafkaTopic.slice(this.namespace.length) : kafkaTopic;
  }

  group(group: string): string {
    return `${this.namespace}${group}`;
  }

  relayDeadLetterTopic(): string {
    return `${this.namespace}dlq.relay`;
  }
}

// Creates the topics that do not exist yet, when the cluster lets an admin do so. Returns false
// when it does not (the mock cluster): the topics are then auto-created on first use.
export async function ensureTopics(kafka: Kafka, topics: string[], partitions = DEFAULT_PARTITIONS): Promise<boolean> {
  const admin = kafka.admin({ retry: { retries: 1 } });
  try {
    await admin.connect();
    const existing = new Set(await admin.listTopics());
    const missing = topics.filter((topic) => !existing.has(topic));
    if (missing.length > 0) {
      await admin.createTopics({ topics: missing.map((topic) => ({ topic, numPartitions: partitions })), waitForLeaders: true });
    }
    return true;
  } catch {
    return false;
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}
