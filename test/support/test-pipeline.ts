import { PostgresLogBus } from '../../platform/bus/postgres-log.ts';
import { CANONICAL_GROUP, startCanonicalPipeline, type CanonicalPipeline } from '../../pipelines/canonical/pipeline.ts';
import type { TestApi } from './test-api.ts';

export interface TestPipeline {
  pipeline: CanonicalPipeline;
  bus: PostgresLogBus;
  // Resolves once the canonical group has committed every record written so far.
  drain: () => Promise<void>;
  stop: () => Promise<void>;
}

export async function startTestPipeline(api: TestApi): Promise<TestPipeline> {
  const errors: unknown[] = [];
  const bus = new PostgresLogBus(api.db.pool, { onError: (e) => errors.push(e) });
  const pipeline = await startCanonicalPipeline({ pool: api.db.pool, bus, clock: api.clock, masterKey: api.masterKey, onError: (e) => errors.push(e) });
  return {
    pipeline,
    bus,
    drain: () => drain(bus, errors),
    stop: () => pipeline.stop(),
  };
}

export async function drain(bus: PostgresLogBus, errors: unknown[] = [], timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (errors.length > 0) throw errors[0];
    const lag = await bus.lag(CANONICAL_GROUP);
    if (lag.every((p) => p.records === 0)) return;
    if (Date.now() > deadline) throw new Error(`canonical pipeline still ${lag.reduce((n, p) => n + p.records, 0)} records behind`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
