import { describe, inject, it } from 'vitest';

// A suite against the Kafka broker and the schema registry the test set-up started (or
// KAFKA_BROKERS and SCHEMA_REGISTRY_URL). Without them it fails under CI, where they must be
// there, and is skipped elsewhere.
export function describeWithKafka(name: string, suite: (engines: { brokers: string; registryUrl: string }) => void): void {
  const brokers = inject('kafkaBrokers');
  const registryUrl = inject('schemaRegistryUrl');
  if (!brokers || !registryUrl) {
    describe(name, () => {
      it.runIf(Boolean(process.env.CI))('has a Kafka broker and a schema registry to run against', () => {
        throw new Error('no Kafka broker or schema registry: the test set-up could not start them and KAFKA_BROKERS or SCHEMA_REGISTRY_URL is not set');
      });
      it.skipIf(Boolean(process.env.CI))('runs only with a broker and a registry', () => undefined);
    });
    return;
  }
  describe(name, () => suite({ brokers, registryUrl }));
}
