import { PostgresLogBus } from '../../platform/bus/postgres-log.ts';
import { startCanonicalPipeline, type CanonicalPipeline } from '../../pipelines/canonical/pipeline.ts';
import { CANONICAL, type ConsumerGroupSpec } from '../../pipelines/groups.ts';
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

// Resolves once every group has committed every record written so far. Groups are looked at in
// the order given, upstream first, so a group read as caught up has nothing more coming.
export async function drain(bus: PostgresLogBus, errors: unknown[] = [], groups: ConsumerGroupSpec[] = [CANONICAL], timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (errors.length > 0) throw errors[0];
    let behind: { group: string; records: number } | undefined;
    for (const { group, topics } of groups) {
      const records = (await bus.lag(group, topics, { upTo: 1000 })).reduce((n, p) => n + p.records, 0);
      if (records > 0) {
        behind = { group, records };
        break;
      }
    }
    if (!behind) return;
    if (Date.now() > deadline) throw new Error(`${behind.group} pipeline still at least ${behind.records} records behind`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
