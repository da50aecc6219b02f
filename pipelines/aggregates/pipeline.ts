import type { AggregateStore } from '../../platform/aggregates/port.ts';
import type { Bus, Consumer } from '../../platform/bus/port.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Pool } from '../../platform/postgres/pool.ts';
import type { CanonicalChange } from '../../schemas/bus/canonical-change.ts';
import { recordingStages } from '../change-stages.ts';
import { AGGREGATES } from '../groups.ts';
import { activitiesOf, retractionOf } from './activities.ts';

export interface AggregatesPipeline {
  consumer: Consumer;
  stop: () => Promise<void>;
}

// pipelines/aggregates: movement change records in, behavioural activities out, and the movements
// corrections supersede taken back out (decision 0064). One store call per batch of a partition.
// Idempotent by construction: the store keys each activity by its subject, time, movement and
// direction, and keeps each retraction once, so a redelivered batch changes nothing.
// A failed batch is reported by the bus (its onError) and retried from the same offset.
// `pool` holds the events' stage history (an `aggregates` entry per event of the batch, movements
// or not: the stage has seen them all).
export async function startAggregatesPipeline(options: { bus: Bus; store: AggregateStore; pool: Pool; clock: Clock }): Promise<AggregatesPipeline> {
  const handle = async (changes: CanonicalChange[]) => {
    const movements = changes.filter((change) => change.object === 'movement');
    const activities = movements.flatMap(activitiesOf);
    const retractions = movements.map(retractionOf).filter((retraction) => retraction !== null);
    if (activities.length > 0 || retractions.length > 0) await options.store.record(activities, retractions);
  };
  const consumer = await options.bus.consume({ ...AGGREGATES, handle: recordingStages({ pool: options.pool, stage: AGGREGATES.group, clock: options.clock }, handle) });
  return { consumer, stop: () => consumer.stop() };
}
