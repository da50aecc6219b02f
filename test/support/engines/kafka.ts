import type { LocalEngine } from './index.ts';

// Placeholder until the Kafka harness lands: no local mock cluster.
export async function startKafkaMock(): Promise<LocalEngine | undefined> {
  return undefined;
}
