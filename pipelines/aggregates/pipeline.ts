import type { AggregateStore } from '../../platform/aggregates/port.ts';
import type { Bus, Consumer } from '../../platform/bus/port.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Pool } from '../../platform/postgres/pool.ts';
import type { CanonicalChange } from '../../schemas/bus/canonical-change.ts';
import { recordingStages } from '../change-stages.ts';
import { AGGREGATES } from '../groups.ts';
import { activitiesOf } from './activities.ts';

export interface AggregatesPipeline {
  consumer: Consumer;
  stop: () => Promise<void>;
}

// pipelines/aggregates: movement change records in, behavioural activities out. One store call
// per batch of a partition. Idempotent by construction: the store keys each activity by its
// subject, time, movement and direction, so a redelivered batch inserts nothing.
// A failed batch is reported by the bus (its onError) and retried from the same offset.
// `pool` holds the events' stage history (an `aggregates` entry per event of the batch, movements
// or not: the stage has seen them all).
export async function startAggregatesPipeline(options: { bus: Bus; store: AggregateStore; pool: Pool; clock: Clock }): Promise<AggregatesPipeline> {
  const handle = async (changes: CanonicalChange[]) => {
    const activities = changes.flatMap((change) => (change.object === 'movement' ? activitiesOf(change) : []));
    if (activities.length > 0) await options.store.record(activities);
  };
  const consumer = await options.bus.consume({ ...AGGREGATES, handle: recordingStages({ pool: options.pool, stage: AGGREGATES.group, clock: options.clock }, handle) });
  return { consumer, stop: () => consumer.stop() };
}
